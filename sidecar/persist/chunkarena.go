//go:build unix

package persist

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// chunkArena is where the journals' full-size chunks live: memory mapped
// outside the Go heap in slabs of slabSize, which the kernel may back
// with one huge page each (Linux, transparent huge pages in madvise
// mode), instead of chunks allocated on the heap.
//
// Why, as measured (make bench's persist rows, 16 terminals flooding 2
// MiB each into 4 MiB journals, perf on the server): every byte of a
// journal that has not wrapped yet lands in memory never touched before,
// and the kernel took a page fault for each 4 KiB of it inside the PTY
// read's copy (7,000 faults more than the plain sidecar for 32 MiB,
// 17% of the server's samples). A huge page is one fault for 2 MiB. And
// off the heap, the journals are not the collector's: with them in the
// heap, GOGC let garbage grow with their size, and the server's RSS with
// 64 full 1 MiB journals was 1.29 times the journals.
//
// It keeps the interface of the sync.Pool it replaced: Get returns a
// *[journalChunk]byte, Put takes one back. Chunks are handed out most
// recently freed first (still in the cache). Past keepHot free chunks,
// a freed chunk's memory is given back to the kernel (MADV_DONTNEED) and
// the chunk kept for reuse: the mapping stays, so a slice of it that is
// read by mistake after its release reads zeros, it does not fault.
type chunkArena struct {
	mu   sync.Mutex
	hot  []*[journalChunk]byte // free, memory resident
	cold []*[journalChunk]byte // free, memory given back
	slab []byte                // what is left of the newest slab
	// onHeap says some chunks are the Go heap's (a mapping failed, or
	// the race detector): their memory is not dropped on Put.
	onHeap bool
}

const (
	// slabSize is how much the arena maps at a time: one huge page.
	slabSize = 2 << 20
	// keepHot is how many free chunks keep their memory: enough for
	// the journals of a few terminals to churn without a fault.
	keepHot = 64
)

func newChunkArena() *chunkArena { return &chunkArena{} }

// Get returns a chunk (a *[journalChunk]byte); its bytes are undefined.
func (a *chunkArena) Get() any {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.hot); n > 0 {
		c := a.hot[n-1]
		a.hot = a.hot[:n-1]
		return c
	}
	if n := len(a.cold); n > 0 {
		c := a.cold[n-1]
		a.cold = a.cold[:n-1]
		return c
	}
	if len(a.slab) < journalChunk {
		s, err := mapSlab()
		if raceBuild || err != nil {
			// No mapping (address space or a limit): the heap it is.
			a.onHeap = true
			return new([journalChunk]byte)
		}
		a.slab = s
	}
	c := (*[journalChunk]byte)(a.slab[:journalChunk])
	a.slab = a.slab[journalChunk:]
	return c
}

// Put takes back a chunk from Get.
func (a *chunkArena) Put(x any) {
	c := x.(*[journalChunk]byte)
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.hot) < keepHot {
		a.hot = append(a.hot, c)
		return
	}
	if !a.onHeap {
		// Best effort: only RSS. (Heap chunks' memory is not ours
		// to drop.)
		unix.Madvise(c[:], unix.MADV_DONTNEED)
	}
	a.cold = append(a.cold, c)
}

// mapSlab maps slabSize bytes aligned to slabSize (a huge page can only
// back an aligned range) and asks for huge pages for them.
func mapSlab() ([]byte, error) {
	if raceBuild {
		return nil, nil
	}
	b, err := unix.Mmap(-1, 0, 2*slabSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, err
	}
	off := 0
	if r := int(uintptr(unsafe.Pointer(&b[0])) % slabSize); r != 0 {
		off = slabSize - r
	}
	// The parts before and after the aligned slab go back. unix.Munmap
	// only takes whole mappings it made, so MunmapPtr.
	if off > 0 {
		munmap(b[:off])
	}
	if rest := b[off+slabSize:]; len(rest) > 0 {
		munmap(rest)
	}
	s := b[off : off+slabSize : off+slabSize]
	adviseHuge(s)
	return s, nil
}

func munmap(b []byte) { unix.MunmapPtr(unsafe.Pointer(&b[0]), uintptr(len(b))) }
