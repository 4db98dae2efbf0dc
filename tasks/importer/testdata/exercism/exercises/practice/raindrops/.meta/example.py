def convert(number):
    sounds = ""
    for factor, sound in ((3, "Pling"), (5, "Plang"), (7, "Plong")):
        if number % factor == 0:
            sounds += sound
    return sounds or str(number)
