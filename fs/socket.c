/*
 * socket.c - socketpair(AF_UNIX, SOCK_STREAM): two connected stream sockets, and the socket
 * calls that work on them (send/recv and their msg forms, shutdown, get/setsockopt,
 * getsockname/getpeername).
 *
 * Each direction is a pipe ring (pipe.c): a socket reads its "in" ring and writes its peer's.
 * So a read blocks while nothing is there and the peer can still write, returns 0 once the
 * peer has closed or shut down writing (or we shut down reading) and the ring is empty; a
 * write to a peer that closed or shut down reading fails with EPIPE and raises SIGPIPE unless
 * MSG_NOSIGNAL.  Poll follows Linux's unix_poll: POLLIN with data, POLLRDHUP | POLLIN once
 * reading is shut down on either side, POLLHUP when both directions are, POLLOUT with room.
 *
 * Not built, with the error Linux gives when a kernel lacks the feature: socket(2) of any
 * family (EAFNOSUPPORT), so no named sockets, bind, listen, connect or accept (ENOSYS); SOCK_DGRAM
 * (and SOCK_RAW, which Linux makes a DGRAM) and SOCK_SEQPACKET pairs (ESOCKTNOSUPPORT, as Linux
 * for the types it lacks); out-of-band data (EOPNOTSUPP); ancillary data such
 * as SCM_RIGHTS (EOPNOTSUPP on send; recvmsg reports none).  Socket calls on other files give
 * ENOTSOCK.
 *
 * Locking: each ring has its own (pipe.c); shut_rd and shut_wr change once, atomically.  Each
 * ring is referenced by both ends and freed by the last release.
 *
 * ABI: the constants below are Linux's include/linux/socket.h and net.h values, which the uapi
 * headers do not carry; struct user_msghdr is laid out as there (56 bytes).
 */
#include <stdatomic.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <asm-generic/poll.h>
#include <asm-generic/socket.h>
#include <linux/fcntl.h>
#include <linux/stat.h>
#include <linux/uio.h>
#include "fs_internal.h"

#define AF_UNIX 1
#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define SOCK_SEQPACKET 5
#define SOCK_TYPE_MASK 0xf
#define MSG_OOB 0x1
#define MSG_PEEK 0x2
#define MSG_DONTWAIT 0x40
#define MSG_WAITALL 0x100
#define MSG_NOSIGNAL 0x4000
#define MSG_CMSG_CLOEXEC 0x40000000
#define SHUT_RD 0
#define SHUT_WR 1
#define SHUT_RDWR 2
#define SOCK_BUF 212992 /* Linux's default SO_SNDBUF / SO_RCVBUF (net.core.wmem_default) */

struct user_msghdr {
	uint64_t msg_name;
	int32_t msg_namelen;
	uint64_t msg_iov;
	uint64_t msg_iovlen;
	uint64_t msg_control;
	uint64_t msg_controllen;
	uint32_t msg_flags;
};
_Static_assert(sizeof(struct user_msghdr) == 56, "user_msghdr");

struct sock {
	struct pipe *in, *out; /* we read in, the peer reads out */
	_Atomic bool shut_rd, shut_wr;
	_Atomic int sndbuf, rcvbuf; /* what SO_SNDBUF / SO_RCVBUF report (the rings stay 64 KiB) */
	int creator; /* tgid of the process that made the pair (SO_PEERCRED) */
};

static const struct file_ops sock_fops;

static struct sock *sock_of(struct file *f)
{
	return f->ops == &sock_fops ? f->priv : NULL;
}

/* fd's socket with a reference on its file, or -EBADF / -ENOTSOCK. */
static long sock_get(uint64_t fd, struct file **fp, struct sock **sp)
{
	long err = fd_get((int)fd, fp);

	if (err)
		return err;
	*sp = sock_of(*fp);
	if (!*sp) {
		file_put(*fp);
		return -ENOTSOCK;
	}
	return 0;
}

/* RCV_SHUTDOWN and SEND_SHUTDOWN of Linux's sk_shutdown, as each side's actions set them. */
static bool rcv_shut(struct sock *s)
{
	return atomic_load(&s->shut_rd) || !pipe_ends(s->in, false);
}

static bool send_shut(struct sock *s)
{
	return atomic_load(&s->shut_wr) || !pipe_ends(s->out, true);
}

static long sock_recv(struct file *f, struct sock *s, void *ubuf, size_t n, unsigned int flags)
{
	bool nonblock = (flags & MSG_DONTWAIT) || (atomic_load(&f->flags) & O_NONBLOCK);
	size_t done = 0;

	if (flags & MSG_OOB)
		return -EOPNOTSUPP;
	for (;;) {
		long r = pipe_read_core(s->in, (char *)ubuf + done, n - done, nonblock,
					flags & MSG_PEEK, atomic_load(&s->shut_rd));

		if (r < 0)
			return done ? (long)done : r;
		done += (size_t)r;
		/* MSG_WAITALL: on until n bytes, EOF or a signal (not with PEEK or nonblocking) */
		if (!r || done == n || !(flags & MSG_WAITALL) || (flags & MSG_PEEK) || nonblock)
			return (long)done;
	}
}

static long sock_send(struct file *f, struct sock *s, const void *ubuf, size_t n,
		      unsigned int flags)
{
	bool nonblock = (flags & MSG_DONTWAIT) || (atomic_load(&f->flags) & O_NONBLOCK);

	if (flags & MSG_OOB)
		return -EOPNOTSUPP;
	/* SEND_SHUTDOWN, checked before any byte (so even for 0): unix_stream_sendmsg's pipe_err */
	if (send_shut(s))
		return (flags & MSG_NOSIGNAL) ? -EPIPE : pipe_epipe();
	return pipe_write_core(s->out, ubuf, n, nonblock, true, !(flags & MSG_NOSIGNAL));
}

static long sock_read(struct file *f, void *ubuf, size_t n, uint64_t *pos)
{
	return sock_recv(f, f->priv, ubuf, n, 0);
}

static long sock_write(struct file *f, const void *ubuf, size_t n, uint64_t *pos)
{
	return sock_send(f, f->priv, ubuf, n, 0);
}

static unsigned int sock_poll(struct file *f, struct ksvc_poll *pt)
{
	struct sock *s = f->priv;
	unsigned int in = pipe_poll_side(s->in, pt, true), out = pipe_poll_side(s->out, pt, false);
	unsigned int mask = in & (POLLIN | POLLRDNORM);

	if (rcv_shut(s))
		mask |= POLLRDHUP | POLLIN | POLLRDNORM;
	if (rcv_shut(s) && send_shut(s))
		mask |= POLLHUP;
	if (out & POLLOUT)
		mask |= POLLOUT | POLLWRNORM | POLLWRBAND;
	return mask;
}

static void sock_shutdown_side(struct sock *s, bool rd)
{
	_Atomic bool *flag = rd ? &s->shut_rd : &s->shut_wr;

	if (!atomic_exchange(flag, true))
		pipe_end_close(rd ? s->in : s->out, rd);
}

static void sock_release(struct file *f)
{
	struct sock *s = f->priv;

	sock_shutdown_side(s, true);
	sock_shutdown_side(s, false);
	/* each ring is held by both ends (one's in is the other's out): the last one frees it */
	pipe_unref(s->in);
	pipe_unref(s->out);
	kfree(s);
}

static const struct file_ops sock_fops = {
	.read = sock_read,
	.write = sock_write,
	.poll = sock_poll,
	.release = sock_release,
};

/* ---- socket(2), socketpair(2) ---- */

static long sys_socket(uint64_t domain, uint64_t type, uint64_t protocol)
{
	(void)domain, (void)type, (void)protocol;
	return -EAFNOSUPPORT; /* no address family is built */
}
SYSCALL(__NR_socket, sys_socket);

static long sys_socketpair(uint64_t domain, uint64_t type, uint64_t protocol, uint64_t usv)
{
	unsigned int flags = (unsigned int)type & ~SOCK_TYPE_MASK;
	struct sock *a = NULL, *b = NULL;
	struct file *fa = NULL, *fb = NULL;
	struct inode *ino = NULL;

	if (flags & ~(unsigned int)(O_NONBLOCK | O_CLOEXEC))
		return -EINVAL;
	if (domain != AF_UNIX)
		return -EAFNOSUPPORT;
	type &= SOCK_TYPE_MASK;
	if (type != SOCK_STREAM)
		return -ESOCKTNOSUPPORT; /* DGRAM and SEQPACKET not built; unix_create's for others */
	if (protocol && protocol != AF_UNIX)
		return -EPROTONOSUPPORT;
	a = kmalloc(sizeof(*a));
	b = kmalloc(sizeof(*b));
	if (!a || !b)
		goto nomem;
	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	a->in = pipe_alloc(2);
	b->in = pipe_alloc(2);
	ino = ramfs_inode_new(S_IFSOCK | 0777);
	if (!a->in || !b->in || !ino)
		goto nomem;
	a->out = b->in;
	b->out = a->in;
	a->creator = b->creator = proc_tgid(current_task());
	a->sndbuf = b->sndbuf = a->rcvbuf = b->rcvbuf = SOCK_BUF;
	fa = file_alloc(&sock_fops, ino, O_RDWR | (flags & O_NONBLOCK), a);
	fb = file_alloc(&sock_fops, ino, O_RDWR | (flags & O_NONBLOCK), b);
	inode_put(ino);
	ino = NULL;
	if (!fa || !fb)
		goto nomem;
	return fd_install_pair(fa, fb, flags & O_CLOEXEC, usv);
nomem:
	/* nothing went through the ops yet: free by hand */
	if (fa)
		fa->ops = NULL, file_put(fa);
	if (fb)
		fb->ops = NULL, file_put(fb);
	if (ino)
		inode_put(ino);
	for (int i = 0; i < 2; i++) { /* each ring was made with two references */
		if (a && a->in)
			pipe_unref(a->in);
		if (b && b->in)
			pipe_unref(b->in);
	}
	kfree(a);
	kfree(b);
	return -ENOMEM;
}
SYSCALL(__NR_socketpair, sys_socketpair);

/* ---- the socket calls ---- */

/* Linux's move_addr_to_user: klen bytes of addr, cut to the caller's length, and klen. */
static long addr_to_user(const void *addr, int klen, uint64_t uaddr, uint64_t ulen)
{
	int len;

	if (ksvc_copy_from_user(&len, (const void *)ulen, sizeof(len)))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;
	if (len > klen)
		len = klen;
	if (len && ksvc_copy_to_user((void *)uaddr, addr, (size_t)len))
		return -EFAULT;
	return ksvc_copy_to_user((void *)ulen, &klen, sizeof(klen)) ? -EFAULT : 0;
}

static long sys_sendto(uint64_t fd, uint64_t ubuf, uint64_t n, uint64_t flags, uint64_t uaddr,
		       uint64_t alen)
{
	struct file *f;
	struct sock *s;
	long r = sock_get(fd, &f, &s);

	if (r)
		return r;
	if (uaddr && ((int)alen < 0 || (int)alen > 128)) /* sockaddr_storage */
		r = -EINVAL;
	else if (uaddr && alen)
		r = -EISCONN; /* a connected stream socket takes no address */
	else
		r = sock_send(f, s, (const void *)ubuf, n, (unsigned int)flags);
	file_put(f);
	return r;
}
SYSCALL(__NR_sendto, sys_sendto);

static long sys_recvfrom(uint64_t fd, uint64_t ubuf, uint64_t n, uint64_t flags, uint64_t uaddr,
			 uint64_t ulen)
{
	struct file *f;
	struct sock *s;
	long r = sock_get(fd, &f, &s);

	if (r)
		return r;
	r = sock_recv(f, s, (void *)ubuf, n, (unsigned int)flags);
	/* the peer of a socketpair is unnamed: unix_copy_addr gives no address */
	if (r >= 0 && uaddr) {
		long e = addr_to_user(NULL, 0, uaddr, ulen);

		if (e)
			r = e;
	}
	file_put(f);
	return r;
}
SYSCALL(__NR_recvfrom, sys_recvfrom);

struct msg_io {
	struct file *f;
	struct sock *s;
	unsigned int flags;
	bool send;
};

static long msg_one(void *ctx, void *base, size_t len, long total)
{
	struct msg_io *io = ctx;

	(void)total;
	return io->send ? sock_send(io->f, io->s, base, len, io->flags)
			: sock_recv(io->f, io->s, base, len, io->flags);
}

/* sendmsg/recvmsg: each iovec in turn, as long as each moves all it asked for. */
static long sock_msg(uint64_t fd, uint64_t umsg, uint64_t flags, bool send)
{
	struct user_msghdr m;
	struct iovec *iov;
	struct file *f;
	struct sock *s;
	long r = sock_get(fd, &f, &s), total = 0;

	if (r)
		return r;
	if (ksvc_copy_from_user(&m, (const void *)umsg, sizeof(m))) {
		file_put(f);
		return -EFAULT;
	}
	if (send && m.msg_name && m.msg_namelen) {
		file_put(f);
		return m.msg_namelen < 0 || m.msg_namelen > 128 ? -EINVAL : -EISCONN;
	}
	if (send && m.msg_controllen) {
		file_put(f);
		return -EOPNOTSUPP; /* ancillary data (SCM_RIGHTS, SCM_CREDENTIALS) not built */
	}
	r = iov_import(m.msg_iov, m.msg_iovlen, &iov);
	if (r) {
		file_put(f);
		return r;
	}
	struct msg_io io = { f, s, (unsigned int)flags, send };

	total = iov_transfer(iov, m.msg_iovlen, msg_one, &io);
	kfree(iov);
	if (!send && total >= 0) {
		/* no name (an unnamed peer), no control data, no flags */
		uint64_t zero = 0;
		uint32_t noflags = 0;
		int namelen = 0;

		if ((m.msg_name && ksvc_copy_to_user((char *)umsg + offsetof(struct user_msghdr, msg_namelen),
						     &namelen, sizeof(namelen))) ||
		    ksvc_copy_to_user((char *)umsg + offsetof(struct user_msghdr, msg_controllen), &zero,
				      sizeof(zero)) ||
		    ksvc_copy_to_user((char *)umsg + offsetof(struct user_msghdr, msg_flags), &noflags,
				      sizeof(noflags)))
			total = -EFAULT;
	}
	file_put(f);
	return total;
}

static long sys_sendmsg(uint64_t fd, uint64_t umsg, uint64_t flags)
{
	return sock_msg(fd, umsg, flags, true);
}
SYSCALL(__NR_sendmsg, sys_sendmsg);

static long sys_recvmsg(uint64_t fd, uint64_t umsg, uint64_t flags)
{
	return sock_msg(fd, umsg, flags & ~(uint64_t)MSG_CMSG_CLOEXEC, false);
}
SYSCALL(__NR_recvmsg, sys_recvmsg);

static long sys_shutdown(uint64_t fd, uint64_t how)
{
	struct file *f;
	struct sock *s;
	long r = sock_get(fd, &f, &s);

	if (r)
		return r;
	if (how > SHUT_RDWR) {
		file_put(f);
		return -EINVAL;
	}
	if (how != SHUT_WR)
		sock_shutdown_side(s, true);
	if (how != SHUT_RD)
		sock_shutdown_side(s, false);
	file_put(f);
	return 0;
}
SYSCALL(__NR_shutdown, sys_shutdown);

/* getsockname and getpeername: both ends of a pair are unnamed, {AF_UNIX} alone */
static long sock_name(uint64_t fd, uint64_t uaddr, uint64_t ulen)
{
	struct file *f;
	struct sock *s;
	uint16_t family = AF_UNIX;
	long r = sock_get(fd, &f, &s);

	if (r)
		return r;
	r = addr_to_user(&family, sizeof(family), uaddr, ulen);
	file_put(f);
	return r;
}

static long sys_getsockname(uint64_t fd, uint64_t uaddr, uint64_t ulen)
{
	return sock_name(fd, uaddr, ulen);
}
SYSCALL(__NR_getsockname, sys_getsockname);

static long sys_getpeername(uint64_t fd, uint64_t uaddr, uint64_t ulen)
{
	return sock_name(fd, uaddr, ulen);
}
SYSCALL(__NR_getpeername, sys_getpeername);

static long sys_getsockopt(uint64_t fd, uint64_t level, uint64_t name, uint64_t uval, uint64_t ulen)
{
	struct file *f;
	struct sock *s;
	int len, v[3] = { 0 }, vlen = sizeof(int);
	long r = sock_get(fd, &f, &s);

	if (r)
		return r;
	if (level != SOL_SOCKET) {
		file_put(f);
		return -EOPNOTSUPP; /* AF_UNIX has no options of other levels */
	}
	switch (name) {
	case SO_TYPE: v[0] = SOCK_STREAM; break;
	case SO_DOMAIN: v[0] = AF_UNIX; break;
	case SO_PROTOCOL: case SO_ERROR: case SO_ACCEPTCONN: case SO_PASSCRED: break;
	case SO_SNDBUF: v[0] = atomic_load(&s->sndbuf); break;
	case SO_RCVBUF: v[0] = atomic_load(&s->rcvbuf); break;
	case SO_PEERCRED: /* struct ucred: the pair's creator, root */
		v[0] = s->creator;
		vlen = sizeof(v);
		break;
	default:
		file_put(f);
		return -ENOPROTOOPT;
	}
	file_put(f);
	if (ksvc_copy_from_user(&len, (const void *)ulen, sizeof(len)))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;
	if (len > vlen)
		len = vlen;
	if (ksvc_copy_to_user((void *)uval, v, (size_t)len) ||
	    ksvc_copy_to_user((void *)ulen, &len, sizeof(len)))
		return -EFAULT;
	return 0;
}
SYSCALL(__NR_getsockopt, sys_getsockopt);

static long sys_setsockopt(uint64_t fd, uint64_t level, uint64_t name, uint64_t uval, uint64_t len)
{
	struct file *f;
	struct sock *s;
	int v;
	long r = sock_get(fd, &f, &s);

	if (r)
		return r;
	if (level != SOL_SOCKET)
		r = -EOPNOTSUPP;
	else if ((int)len < (int)sizeof(int))
		r = -EINVAL;
	else if (ksvc_copy_from_user(&v, (const void *)uval, sizeof(v)))
		r = -EFAULT;
	else if (name == SO_SNDBUF) /* sock_setsockopt: capped by wmem_max, doubled */
		atomic_store(&s->sndbuf, MAX(MIN((unsigned int)v, SOCK_BUF) * 2, 4608u));
	else if (name == SO_RCVBUF)
		atomic_store(&s->rcvbuf, MAX(MIN((unsigned int)v, SOCK_BUF) * 2, 2304u));
	else
		r = -ENOPROTOOPT; /* the rest is not built */
	file_put(f);
	return r;
}
SYSCALL(__NR_setsockopt, sys_setsockopt);
