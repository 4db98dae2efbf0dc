package power

import "gonum.org/v1/gonum/stat/distuv"

var tq = map[int]float64{}

func tQuantile(nu int) float64 {
	if q, ok := tq[nu]; ok {
		return q
	}
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(nu)}.Quantile(1 - Alpha/2)
	tq[nu] = q
	return q
}
