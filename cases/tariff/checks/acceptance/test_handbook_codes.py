"""Frozen acceptance tests: every tariff code of the Harbor Settlement Handbook."""
from tariff import settle


def test_hx_101_mid():
    assert settle("HX-101", 1234567) == 15432


def test_hx_101_fraction():
    assert settle("HX-101", 100001) == 1250


def test_hx_101_minimum():
    assert settle("HX-101", 1) == 250


def test_hx_101_maximum():
    assert settle("HX-101", 1000000000) == 90000


def test_hx_101_half():
    assert settle("HX-101", 100040) == 1250


def test_hx_205_mid():
    assert settle("HX-205", 1234567) == 4938


def test_hx_205_fraction():
    assert settle("HX-205", 100001) == 400


def test_hx_205_minimum():
    assert settle("HX-205", 1) == 0


def test_hx_205_maximum():
    assert settle("HX-205", 1000000000) == 15000


def test_hx_205_half():
    assert settle("HX-205", 100125) == 400


def test_kv_310_mid():
    assert settle("KV-310", 1234567) == 33951


def test_kv_310_fraction():
    assert settle("KV-310", 100001) == 2750


def test_kv_310_minimum():
    assert settle("KV-310", 1) == 1200


def test_kv_310_maximum():
    assert settle("KV-310", 1000000000) == 250000


def test_kv_310_half():
    assert settle("KV-310", 100200) == 2756


def test_kv_344_mid():
    assert settle("KV-344", 1234567) == 2223


def test_kv_344_fraction():
    assert settle("KV-344", 100001) == 181


def test_kv_344_minimum():
    assert settle("KV-344", 1) == 100


def test_kv_344_maximum():
    assert settle("KV-344", 1000000000) == 4000


def test_kv_344_half():
    assert settle("KV-344", 102500) == 185


def test_qm_402_mid():
    assert settle("QM-402", 1234567) == 62963


def test_qm_402_fraction():
    assert settle("QM-402", 100001) == 5100


def test_qm_402_minimum():
    assert settle("QM-402", 1) == 0


def test_qm_402_maximum():
    assert settle("QM-402", 1000000000) == 1000000


def test_qm_402_half():
    assert settle("QM-402", 100500) == 5126


def test_qm_477_mid():
    assert settle("QM-477", 1234567) == 11728


def test_qm_477_fraction():
    assert settle("QM-477", 100001) == 950


def test_qm_477_minimum():
    assert settle("QM-477", 1) == 475


def test_qm_477_maximum():
    assert settle("QM-477", 1000000000) == 47500


def test_qm_477_half():
    assert settle("QM-477", 101000) == 960


def test_tr_588_mid():
    assert settle("TR-588", 1234567) == 33300


def test_tr_588_fraction():
    assert settle("TR-588", 100001) == 3330


def test_tr_588_minimum():
    assert settle("TR-588", 1) == 333


def test_tr_588_maximum():
    assert settle("TR-588", 1000000000) == 33300


def test_tr_588_half():
    assert settle("TR-588", 105000) == 3496


def test_tr_613_mid():
    assert settle("TR-613", 1234567) == 865


def test_tr_613_fraction():
    assert settle("TR-613", 100001) == 71


def test_tr_613_minimum():
    assert settle("TR-613", 1) == 25


def test_tr_613_maximum():
    assert settle("TR-613", 1000000000) == 2500


def test_tr_613_half():
    assert settle("TR-613", 105000) == 74
