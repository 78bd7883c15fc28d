/*
 * btf_sys.c - BTF objects as bpf(2) sees them: BPF_BTF_LOAD, the BTF file ("btf", O_RDONLY,
 * fdinfo btf_id), BPF_OBJ_GET_INFO_BY_FD for a BTF fd (struct bpf_btf_info: id, the raw bytes
 * back, name and kernel_btf) and the fd -> BTF lookup programs and maps use.
 *
 * Linux 6.1 (kernel/bpf/syscall.c bpf_btf_load, kernel/bpf/btf.c btf_new_fd and
 * btf_get_info_by_fd) is the reference: bytes past btf_log_level must be zero (EINVAL);
 * btf_size above 16 MiB is E2BIG; a log needs size in [128, UINT_MAX >> 2], a buffer and a
 * level within 7 (EINVAL); the BTF is parsed (btf.c), given an id and an fd.  Program BTF has
 * no name (name_len 0) and is not kernel BTF; the kernel's own is, named "vmlinux", id 1.  BTF cannot be pinned in 6.1 (obj.c: EINVAL).
 * BPF_BTF_GET_FD_BY_ID and BPF_BTF_GET_NEXT_ID walk the id table (obj.c).
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "btf.h"

_Static_assert(sizeof(struct bpf_btf_info) == 32, "Linux 6.1 struct bpf_btf_info");

static void btf_file_get(void *priv)
{
	bpf_btf_get(priv);
}

static void btf_file_release(void *priv)
{
	bpf_btf_put(priv);
}

static size_t btf_fdinfo(void *priv, char *buf, size_t size)
{
	const struct bpf_btf *btf = priv;

	return (size_t)ksnprintf(buf, size, "btf_id:\t%u\n", btf->id);
}

const struct ksvc_file_ops bpf_btf_fops = {
	.name = "btf",
	.rdonly = true,
	.get = btf_file_get,
	.release = btf_file_release,
	.show_fdinfo = btf_fdinfo,
};

int bpf_btf_get_fd(int fd, struct bpf_btf **out)
{
	void *priv;
	int err = ksvc_fd_get(fd, &bpf_btf_fops, &priv);

	if (err)
		return err == -EINVAL ? -EINVAL : -EBADF;
	*out = priv;
	return 0;
}

uint32_t bpf_btf_id(const struct bpf_btf *btf)
{
	return btf->id;
}

int bpf_btf_fd_install(struct bpf_btf *btf)
{
	return ksvc_fd_install(&bpf_btf_fops, btf, true);
}

int bpf_btf_load(const union bpf_attr *attr)
{
	struct bpf_verifier_log log = { .ubuf = BPF_UPTR(attr->btf_log_buf),
					.size = attr->btf_log_size,
					.level = attr->btf_log_level };
	struct bpf_btf *btf;
	void *data;
	int err, fd;

	if (bpf_attr_tail_dirty(attr, BPF_END_OF(btf_log_level)))
		return -EINVAL;
	if (attr->btf_size > BPF_BTF_MAX_SIZE)
		return -E2BIG;
	if (log.level || log.ubuf || log.size) {
		if (log.size < 128 || log.size > (UINT32_MAX >> 2) || !log.level || !log.ubuf ||
		    (log.level & ~7u))
			return -EINVAL;
	}
	data = ksvc_alloc(attr->btf_size ? attr->btf_size : 1);
	if (!data)
		return -ENOMEM;
	if (attr->btf_size && ksvc_copy_from_user(data, BPF_UPTR(attr->btf), attr->btf_size)) {
		ksvc_free(data);
		return -EFAULT;
	}
	err = bpf_btf_parse(data, attr->btf_size, &log, &btf);
	ksvc_free(data);
	if (err)
		return err;
	err = bpf_id_alloc(BPF_OBJ_BTF, btf, &btf->refcnt, &btf->id);
	if (err) {
		bpf_btf_put(btf);
		return err;
	}
	fd = bpf_btf_fd_install(btf);
	if (fd < 0)
		bpf_btf_put(btf);
	return fd;
}

int bpf_btf_info(struct bpf_btf *btf, const union bpf_attr *attr, union bpf_attr *uattr)
{
	void *uinfo = BPF_UPTR(attr->info.info);
	struct bpf_btf_info info;
	uint32_t len, copy;
	char zero = 0;
	int err = bpf_user_tail_zero(uinfo, sizeof(info), attr->info.info_len);

	if (err)
		return err;
	len = MIN(attr->info.info_len, (uint32_t)sizeof(info));
	memset(&info, 0, sizeof(info));
	if (ksvc_copy_from_user(&info, uinfo, len))
		return -EFAULT;
	info.id = btf->id;
	copy = MIN(btf->size, info.btf_size);
	if (copy && ksvc_copy_to_user(BPF_UPTR(info.btf), btf->data, copy))
		return -EFAULT;
	info.btf_size = btf->size;
	info.kernel_btf = btf->kernel;
	if (!info.name != !info.name_len)
		return -EINVAL;
	/* the name (program BTF has none), cut to the buffer with ENOSPC after the info is
	 * written, as btf_get_info_by_fd */
	const char *name = btf->kernel ? "vmlinux" : "";
	uint32_t room = info.name_len, nlen = (uint32_t)strlen(name);

	info.name_len = nlen;
	if (info.name) {
		uint32_t n = MIN(room - 1, nlen);

		if ((n && ksvc_copy_to_user(BPF_UPTR(info.name), name, n)) ||
		    ksvc_copy_to_user((char *)BPF_UPTR(info.name) + n, &zero, 1))
			return -EFAULT;
		if (room <= nlen)
			err = -ENOSPC;
	}
	if (ksvc_copy_to_user(uinfo, &info, len) ||
	    ksvc_copy_to_user(&uattr->info.info_len, &len, sizeof(len)))
		return -EFAULT;
	return err;
}

/* The kernel's own BTF once bpf_btf_vmlinux_init made it (set once at boot, never freed). */
static struct bpf_btf *vmlinux_btf;

struct bpf_btf *bpf_btf_vmlinux(void)
{
	return __atomic_load_n(&vmlinux_btf, __ATOMIC_ACQUIRE);
}

int bpf_btf_vmlinux_init(const void *data, uint32_t size)
{
	struct bpf_verifier_log log = { 0 };
	struct bpf_btf *btf;
	int err = bpf_btf_parse(data, size, &log, &btf);

	if (err)
		return err;
	btf->kernel = true;
	err = bpf_id_alloc(BPF_OBJ_BTF, btf, &btf->refcnt, &btf->id);
	if (err)
		bpf_btf_put(btf);
	else
		__atomic_store_n(&vmlinux_btf, btf, __ATOMIC_RELEASE);
	return err; /* on success the parse's reference stays: the object lives as the kernel */
}
