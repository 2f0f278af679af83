//go:build linux

package fleet

import "golang.org/x/sys/unix"

// sharedFS are the network and cluster file systems (statfs magic numbers)
// that every node of a cluster usually mounts at the same path.
var sharedFS = map[int64]string{
	0x6969:     "nfs",
	0x517b:     "smb",
	0xff534d42: "cifs",
	0xfe534d42: "smb2",
	0x0bd00bd0: "lustre",
	0x47504653: "gpfs",
	0x19830326: "beegfs",
	0x00c36400: "cephfs",
	0x5346414f: "afs",
	0xaad7aaea: "panfs",
}

// OnSharedFS says whether path is on a network or cluster file system
// (NFS, Lustre, GPFS, BeeGFS, CephFS...), and names it: a binary there is
// at the same path on the nodes, and srun need not copy it.
func OnSharedFS(path string) (bool, string) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return false, ""
	}
	name, ok := sharedFS[int64(st.Type)]
	return ok, name
}
