package engine

// OutputFrame is the most one OUTPUT frame takes on the wire, header
// included, in both servers. Hosts read their stdout pipe 64 KiB at a
// time (Node, libuv and most runtimes do), so a flood whose every frame
// is exactly one such read reaches the host as whole frames, one per
// read: a host decoder never has to join a frame from two reads, which
// costs naive decoders (concatenate, copy out) two or three extra copies
// of every byte.
const OutputFrame = 64 << 10

// minRoom is the least an OUTPUT frame carries when a terminal's id is so
// long that its header leaves less than this of OutputFrame.
const minRoom = 4 << 10

// OutputRoom is how many bytes of output one OUTPUT frame of a terminal
// whose frame header takes hdr bytes carries at most.
func OutputRoom(hdr int) int { return max(OutputFrame-hdr, minRoom) }
