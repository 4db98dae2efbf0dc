package scripted

import (
	"hash/fnv"
	"unicode/utf8"
)

// The emulated tokenizer is deterministic and simple enough to check by
// hand: a text splits into pieces of at most four bytes, cut only at rune
// boundaries; one piece is one token. ASCII text of n bytes is ceil(n/4)
// tokens.
const pieceBytes = 4

// vocabSize bounds emulated token ids (GPT-2's, like the captures' model).
const vocabSize = 50257

// Pieces splits s into its tokens' texts.
func Pieces(s string) []string {
	out := make([]string, 0, len(s)/pieceBytes+1)
	for len(s) > 0 {
		n := pieceLen(s)
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// CountTokens is len(Pieces(s)) without building the pieces.
func CountTokens(s string) int {
	n := 0
	for len(s) > 0 {
		s = s[pieceLen(s):]
		n++
	}
	return n
}

// pieceLen is the length in bytes of the first piece of a non-empty s: as
// many whole runes as fit in pieceBytes, and at least one.
func pieceLen(s string) int {
	n := 0
	for n < len(s) {
		_, size := utf8.DecodeRuneInString(s[n:])
		if n > 0 && n+size > pieceBytes {
			break
		}
		n += size
	}
	return n
}

// TokenID is a piece's emulated vocabulary id.
func TokenID(piece string) int64 {
	h := fnv.New32a()
	h.Write([]byte(piece))
	return int64(h.Sum32() % vocabSize)
}

// filler returns text of exactly n tokens (ASCII, four bytes a token), for
// responses that must generate a given number of tokens.
func filler(n int) string {
	const words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua "
	b := make([]byte, 0, n*pieceBytes)
	for i := 0; len(b) < n*pieceBytes; i++ {
		b = append(b, words[i%len(words)])
	}
	return string(b)
}
