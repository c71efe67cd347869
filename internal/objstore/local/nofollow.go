package local

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Every path below the bucket directory is opened one component at a time,
// each relative to the handle of its parent and with O_NOFOLLOW, so the
// kernel refuses a symlink at the moment of use: there is no window between a
// check and a use for a link to be swapped in. os.Root cannot do this, as it
// follows links that stay inside the root, and one tenant's folder is inside
// the root of every other tenant.
const (
	dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	// O_NONBLOCK keeps a planted FIFO from blocking the open; it has no
	// effect on the regular files that are the only objects.
	fileFlags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
)

// errNotObject reports a name that exists but is no object: a directory, a
// link, a device.
var errNotObject = errors.New("not a regular file")

// absent reports whether err means that a path holds no object, because a
// component is missing, is a file where a directory was expected, or is a
// symlink: O_NOFOLLOW fails on a link with ELOOP, or with ENOTDIR when
// O_DIRECTORY is set too.
func absent(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) ||
		errors.Is(err, unix.ELOOP) || errors.Is(err, errNotObject)
}

// openat retries EINTR, as package os does for its own system calls.
func openat(dirfd int, name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// rootFD returns the descriptor of the bucket directory; after Close it is
// -1, so that a late call fails with EBADF instead of reaching a reused
// descriptor.
func (b *Bucket) rootFD() int { return int(b.dir.Fd()) }

// openDir opens dir, a slash-separated path of directories below the bucket
// directory ("." for the directory itself), refusing a symlink in every
// component. With create, missing directories are made (mkdirat never
// follows a link either). The caller closes the result.
func (b *Bucket) openDir(dir string, create bool, perm uint32) (int, error) {
	// A fresh open, not a dup: a listing reads the directory through its
	// own file offset.
	fd, err := openat(b.rootFD(), ".", dirFlags, 0)
	if err != nil || dir == "." {
		return fd, err
	}
	for comp := range strings.SplitSeq(dir, "/") {
		next, err := openat(fd, comp, dirFlags, 0)
		if create && errors.Is(err, unix.ENOENT) {
			if err = b.sys.mkdirat(fd, comp, perm); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = openat(fd, comp, dirFlags, 0)
			}
		}
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// openFile opens the regular file name in the directory dirfd without
// following a link; anything else is errNotObject.
func openFile(dirfd int, name, key string) (*os.File, version, error) {
	fd, err := openat(dirfd, name, fileFlags, 0)
	if err != nil {
		return nil, version{}, err
	}
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	if err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG {
		err = errNotObject
	}
	if err == nil {
		// Back to blocking, so that os.NewFile does not hand a regular file
		// to the poller (kqueue mishandles them).
		err = unix.SetNonblock(fd, false)
	}
	if err != nil {
		unix.Close(fd)
		return nil, version{}, err
	}
	return os.NewFile(uintptr(fd), key), versionOf(&st), nil
}

// version identifies one version of a file: a rewrite or replacement changes
// it, so a hash cached for a version stays right for it.
type version struct {
	dev, ino uint64
	size     int64
	mtimeNS  int64
	perm     uint32 // the permission bits: the object's recorded mode
}

func versionOf(st *unix.Stat_t) version {
	return version{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size, mtimeNS: st.Mtim.Nano(), perm: st.Mode & 0o777}
}

func (v version) mode() fs.FileMode { return fs.FileMode(v.perm) }

func (v version) modTime() time.Time { return time.Unix(0, v.mtimeNS) }

// splitKey splits a valid key into its directory ("." at the top) and name.
func splitKey(key string) (dir, name string) {
	i := strings.LastIndexByte(key, '/')
	if i < 0 {
		return ".", key
	}
	return key[:i], key[i+1:]
}
