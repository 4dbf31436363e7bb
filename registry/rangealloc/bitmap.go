package rangealloc

import (
	"math/big"
	"math/rand/v2"
)

// bitmap is a set of the offsets [0, size), bit i set when offset i is
// allocated. Its bytes are big.Int's big-endian bytes, as upstream stores
// them. Not safe for concurrent use: each operation works on a fresh copy
// read from etcd.
type bitmap struct {
	size  int
	bits  big.Int
	count int
}

func newBitmap(size int) *bitmap { return &bitmap{size: size} }

// restore loads the stored bytes.
func (b *bitmap) restore(data []byte) {
	b.bits.SetBytes(data)
	b.count = 0
	for i := 0; i < b.size; i++ {
		if b.bits.Bit(i) == 1 {
			b.count++
		}
	}
}

func (b *bitmap) bytes() []byte { return b.bits.Bytes() }

func (b *bitmap) has(offset int) bool {
	return offset >= 0 && offset < b.size && b.bits.Bit(offset) == 1
}

func (b *bitmap) free() int { return b.size - b.count }

// allocate sets offset; false if it was already set or out of range.
func (b *bitmap) allocate(offset int) bool {
	if offset < 0 || offset >= b.size || b.has(offset) {
		return false
	}
	b.bits.SetBit(&b.bits, offset, 1)
	b.count++
	return true
}

// release clears offset; a no-op if it was not set.
func (b *bitmap) release(offset int) {
	if !b.has(offset) {
		return
	}
	b.bits.SetBit(&b.bits, offset, 0)
	b.count--
}

// allocateNext sets a free offset chosen at random, first in
// [reserved, size), then in [0, reserved); false when the map is full.
func (b *bitmap) allocateNext(reserved int, rnd *rand.Rand) (int, bool) {
	if b.free() == 0 {
		return 0, false
	}
	for _, band := range [][2]int{{reserved, b.size}, {0, reserved}} {
		lo, hi := band[0], band[1]
		if lo >= hi {
			continue
		}
		start := lo + rnd.IntN(hi-lo)
		for i := 0; i < hi-lo; i++ {
			offset := lo + (start-lo+i)%(hi-lo)
			if b.allocate(offset) {
				return offset, true
			}
		}
	}
	return 0, false
}
