# fs/ sources: portable files go in PSRCS (kernel and host tests), kernel-only ones in KSRCS.
# the initramfs cpio iterator and writer
PSRCS += fs/cpio.c fs/cpio_write.c
UNIT_TESTS += cpio fs_cpio_write
UNIT_SRCS_cpio := fs/cpio.c
UNIT_SRCS_fs_cpio_write := fs/cpio_write.c fs/cpio.c
KSRCS += fs/ramfs.c fs/namei.c fs/file.c fs/fdtable.c fs/dev.c fs/sys_rw.c fs/sys_stat.c fs/sys_namespace.c fs/initramfs.c fs/pipe.c fs/socket.c fs/posix_lock.c fs/inotify.c fs/eventfd.c fs/poll.c fs/sys_misc.c fs/pseudo.c fs/procfs.c fs/procfs_fd.c fs/sysfs.c fs/tracefs.c fs/bpffs.c fs/cgroupfs.c
