package broker

import (
	"math/rand/v2"
	"testing"
)

// The window agrees with a plain model (a slice in use order) through many
// adds, including hashes that crowd a few table slots so that removal has
// long runs to shift, and a window of one.
func TestIDWindowMatchesModel(t *testing.T) {
	for _, max := range []int{1, 2, 3, 7, 64, 1000} {
		r := rand.New(rand.NewPCG(uint64(max), 9))
		w := idWindow{max: max}
		var model []uint64
		in := func(h uint64) bool {
			for _, m := range model {
				if m == nonzero(h) {
					return true
				}
			}
			return false
		}
		for i := 0; i < 20*max+200; i++ {
			// Low bits from a small set: long probe runs; high bits random.
			h := r.Uint64()&^0xffff | uint64(r.IntN(8))
			if i%5 == 0 && len(model) > 0 {
				h = model[r.IntN(len(model))] // an id in the window
			}
			if got, want := w.has(h), in(h); got != want {
				t.Fatalf("max %d step %d: has(%x) = %v, want %v", max, i, h, got, want)
			}
			if in(h) {
				continue
			}
			w.add(h)
			model = append(model, nonzero(h))
			if len(model) > max {
				model = model[1:]
			}
			if w.len() != len(model) {
				t.Fatalf("max %d step %d: len %d, want %d", max, i, w.len(), len(model))
			}
		}
		for _, h := range model {
			if !w.has(h) {
				t.Fatalf("max %d: %x forgotten while in the window", max, h)
			}
		}
	}
}

// The table stays within twice the window rounded up, the ring within the
// window: the memory bound the broker documents.
func TestIDWindowSize(t *testing.T) {
	w := idWindow{max: DefaultRequestIDMemory}
	for i := 0; i < 3*DefaultRequestIDMemory; i++ {
		w.add(uint64(i)*0x9E3779B97F4A7C15 + 1)
	}
	if got := 8 * (cap(w.ring) + cap(w.tab)); got > 24*DefaultRequestIDMemory {
		t.Fatalf("the window holds %d bytes, over 24 per id (%d)", got, 24*DefaultRequestIDMemory)
	}
}
