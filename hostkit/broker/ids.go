package broker

// idWindow remembers the most recent max requestId hashes of one instance,
// exactly: a ring of the hashes in the order they were used, and an
// open-addressing set over the same hashes (linear probing, deletion by
// backward shift, 0 meaning empty). Adding a hash past max forgets the
// oldest. Memory is 8 bytes per ring slot plus 8 per table slot, the table at
// most twice the ring rounded up to a power of two: 24 bytes an id, so
// 384 KiB for the default of 2¹⁴ ids, allocated as the instance uses ids
// (doubling), never more.
type idWindow struct {
	max  int
	ring []uint64 // hashes in use order; full once len(ring) == max
	next int      // the ring slot the next hash overwrites once full
	tab  []uint64 // len is 0 or a power of two ≥ 2·len(ring)
}

// has reports whether h is remembered.
func (w *idWindow) has(h uint64) bool {
	if len(w.tab) == 0 {
		return false
	}
	h = nonzero(h)
	mask := uint64(len(w.tab) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch w.tab[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}

// add remembers h, which must not be remembered already, forgetting the
// oldest hash when the window is full.
func (w *idWindow) add(h uint64) {
	h = nonzero(h)
	if len(w.ring) < w.max {
		w.ring = append(w.ring, h)
		if 2*len(w.ring) > len(w.tab) {
			w.grow()
		}
	} else {
		w.remove(w.ring[w.next])
		w.ring[w.next] = h
		w.next = (w.next + 1) % w.max
	}
	w.insert(h)
}

// len is how many hashes are remembered.
func (w *idWindow) len() int { return len(w.ring) }

func (w *idWindow) insert(h uint64) {
	mask := uint64(len(w.tab) - 1)
	i := h & mask
	for w.tab[i] != 0 {
		i = (i + 1) & mask
	}
	w.tab[i] = h
}

func (w *idWindow) remove(h uint64) {
	mask := uint64(len(w.tab) - 1)
	i := h & mask
	for w.tab[i] != h {
		if w.tab[i] == 0 {
			return
		}
		i = (i + 1) & mask
	}
	// Backward shift: move each later entry of the run into the hole unless
	// its home slot lies cyclically in (hole, its slot].
	w.tab[i] = 0
	for j := (i + 1) & mask; w.tab[j] != 0; j = (j + 1) & mask {
		home := w.tab[j] & mask
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			w.tab[i], w.tab[j] = w.tab[j], 0
			i = j
		}
	}
}

func (w *idWindow) grow() {
	n := 16
	for n < 2*len(w.ring) {
		n *= 2
	}
	old := w.tab
	w.tab = make([]uint64, n)
	for _, h := range old {
		if h != 0 {
			w.insert(h)
		}
	}
}

// nonzero keeps 0 free to mean an empty table slot; a hash of 0 shares its
// entry with 1 (odds 2⁻⁶³, and the cost is one fresh id taken for used).
func nonzero(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
}
