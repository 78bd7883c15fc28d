/*
 * link.c - BPF_LINK_CREATE for BPF_PERF_EVENT (Linux's bpf_perf_link): a PERF_EVENT or
 * TRACEPOINT program on a perf event, with a bpf_cookie, held by the link fd (anon file
 * "bpf_link") and by pins; the program is detached when the last of them goes.  The link has
 * an id (obj.c: BPF_LINK_GET_NEXT_ID / _GET_FD_BY_ID) and its info and fdinfo (info.c).
 *
 * Linux 6.1 ABI: link_create.kprobe_multi.cookies is the command's last field; EINVAL for
 * another program type, attach type or flags; EBADF for a target fd that is no perf event.
 * Not here: the other link types (raw tracepoints, iterators, cgroups...), LINK_UPDATE,
 * LINK_DETACH.
 */
#include <stdint.h>

#include <kern/errno.h>
#include <kern/ksvc.h>
#include "bpf_internal.h"

void bpf_link_get(struct bpf_link *link)
{
	atomic_fetch_add(&link->refcnt, 1);
}

void bpf_link_put(struct bpf_link *link)
{
	const struct bpf_perf_ops *ops = bpf_perf();

	if (atomic_fetch_sub(&link->refcnt, 1) != 1)
		return;
	bpf_id_free(BPF_OBJ_LINK, link->id);
	/* the last reference detaches the program (Linux: perf_event_free_bpf_prog) */
	ops->detach(link->event, NULL);
	ops->event_put(link->event);
	bpf_prog_put(link->prog);
	ksvc_free(link);
}

static void link_file_get(void *priv)
{
	bpf_link_get(priv);
}

static void link_file_release(void *priv)
{
	bpf_link_put(priv);
}

const struct ksvc_file_ops bpf_link_fops = {
	.name = "bpf_link",
	.rdonly = true, /* bpf_link_prime: anon_inode_getfile(..., O_CLOEXEC) */
	.get = link_file_get,
	.release = link_file_release,
	.show_fdinfo = bpf_link_fdinfo,
};

int bpf_link_get_fd(int fd, struct bpf_link **out)
{
	void *priv;
	int err = ksvc_fd_get(fd, &bpf_link_fops, &priv);

	if (err)
		return err == -EINVAL ? -EINVAL : -EBADF;
	*out = priv;
	return 0;
}

int bpf_link_create(const union bpf_attr *attr)
{
	const struct bpf_perf_ops *ops = bpf_perf();
	struct bpf_prog *prog;
	struct bpf_link *l;
	void *event;
	int err, fd;

	if (bpf_attr_tail_dirty(attr, BPF_END_OF(link_create.kprobe_multi.cookies)))
		return -EINVAL;
	err = bpf_prog_get_fd((int)attr->link_create.prog_fd, &prog);
	if (err)
		return err;
	err = -EINVAL;
	/* PERF_EVENT and TRACEPOINT programs link to perf events (the event checks which) */
	if ((prog->type != BPF_PROG_TYPE_PERF_EVENT && prog->type != BPF_PROG_TYPE_TRACEPOINT) ||
	    attr->link_create.attach_type != BPF_PERF_EVENT || attr->link_create.flags)
		goto out_prog;
	err = -EBADF;
	if (!ops || ops->event_get_fd((int)attr->link_create.target_fd, &event))
		goto out_prog;
	err = -ENOMEM;
	l = ksvc_alloc(sizeof(*l));
	if (!l)
		goto out_event;
	atomic_store(&l->refcnt, 1);
	l->type = BPF_LINK_TYPE_PERF_EVENT;
	l->prog = prog;
	l->event = event;
	bpf_prog_get(prog); /* the event's reference */
	err = ops->attach(event, prog, attr->link_create.perf_event.bpf_cookie);
	if (err) {
		bpf_prog_put(prog);
		ksvc_free(l);
		goto out_event;
	}
	err = bpf_id_alloc(BPF_OBJ_LINK, l, &l->refcnt, &l->id);
	if (err) {
		ops->detach(event, NULL);
		ops->event_put(event);
		bpf_prog_put(prog);
		ksvc_free(l);
		return err;
	}
	fd = ksvc_fd_install(&bpf_link_fops, l, true);
	if (fd < 0)
		bpf_link_put(l);
	return fd;
out_event:
	ops->event_put(event);
out_prog:
	bpf_prog_put(prog);
	return err;
}
