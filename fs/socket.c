/*
 * socket.c - AF_UNIX SOCK_STREAM sockets: socketpair(2), and named sockets with socket(2),
 * bind, listen, connect, accept/accept4; the calls that work on a connection (send/recv and
 * their msg forms, shutdown, get/setsockopt, getsockname/getpeername).
 *
 * A connection is two pipe rings (pipe.c): a socket reads its "in" ring and writes its peer's.
 * So a read blocks while nothing is there and the peer can still write, returns 0 once the
 * peer has closed or shut down writing (or we shut down reading) and the ring is empty; a
 * write to a peer that closed or shut down reading fails with EPIPE and raises SIGPIPE unless
 * MSG_NOSIGNAL.  A socket closed with unread bytes, or a connection its listener never
 * accepted, leaves ECONNRESET for the peer's next read that finds nothing (unix_release_sock).
 * Poll follows Linux's unix_poll: POLLIN with data, POLLRDHUP | POLLIN once reading is shut
 * down on either side, POLLHUP when both directions are, POLLOUT with room; a listener is
 * POLLIN with a connection waiting; an unconnected socket POLLOUT | POLLHUP.
 *
 * Names: bind to a path makes a socket inode there (mode 0777 & ~umask, EADDRINUSE when the
 * name exists) that stays until unlink, as on Linux; the socket holds a reference on it, and
 * connect finds the listener by that inode (ECONNREFUSED for a socket inode nobody listens on
 * or for another file type).  Abstract names (sun_path[0] == 0) live only while their socket
 * does; bind with the family alone autobinds one ("\0" and 5 hex digits).  connect queues a
 * new, already connected socket (an embryo) on the listener, at most backlog + 1 of them
 * (then EAGAIN, or a wait); accept takes the oldest.
 *
 * Not built, with the error Linux gives when a kernel lacks the feature: other families
 * (EAFNOSUPPORT); SOCK_DGRAM (and SOCK_RAW, which Linux makes a DGRAM) and SOCK_SEQPACKET
 * (ESOCKTNOSUPPORT, as Linux for the types it lacks); out-of-band data (EOPNOTSUPP);
 * ancillary data such as SCM_RIGHTS (EOPNOTSUPP on send; recvmsg reports none); filesystem
 * permission checks on connect (we run as root).  Socket calls on other files give ENOTSOCK.
 *
 * Locking: unix_mutex (a sleeping lock, taken before vfs_lock) orders the state changes:
 * binding, the bound list, listen, connect, accept, release, and the name and peer fields.
 * state and qlen are also read without it (poll, and sleepers re-testing after
 * waitq_prepare); in/out are set before state becomes CONNECTED and never change after.
 * Each ring has its own lock (pipe.c); shut_rd and shut_wr change once, atomically.  A sock
 * is referenced by its file (or, as an embryo, by its listener's queue), by its peer and by
 * a connect waiting on it as a listener: the last reference frees it.
 *
 * ABI: the constants below are Linux's include/linux/socket.h and net.h values, which the uapi
 * headers do not carry; struct user_msghdr is laid out as there (56 bytes), sockaddr_un as
 * <linux/un.h> (110 bytes).
 */
#include <stdatomic.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/list.h>
#include <kern/mm.h>
#include <kern/proc.h>
#include <kern/string.h>
#include <kern/syscall.h>
#include <asm-generic/poll.h>
#include <asm-generic/socket.h>
#include <linux/fcntl.h>
#include <linux/magic.h>
#include <linux/stat.h>
#include <linux/uio.h>
#include <linux/un.h>
#include "fs_internal.h"

#define AF_UNIX 1
#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define SOCK_RAW 3
#define SOCK_SEQPACKET 5
#define SOCK_MAX 11
#define NPROTO 46 /* AF_MAX in 6.1 */
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
#define SOMAXCONN 4096 /* net.core.somaxconn */
#define SOCKADDR_STORAGE 128
#define SUN_PATH_OFF 2 /* offsetof(struct sockaddr_un, sun_path) */
_Static_assert(sizeof(struct sockaddr_un) == 110, "sockaddr_un");

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

enum sock_state { SS_UNCONNECTED, SS_LISTEN, SS_CONNECTED, SS_CLOSED };

/* A socket name: the bytes of a struct sockaddr_un as getsockname returns them; len 0: none. */
struct unix_name {
	int len;
	uint8_t bytes[sizeof(struct sockaddr_un) + 1];
};

struct sock {
	_Atomic int refs; /* (a) see the head comment */
	_Atomic int state; /* enum sock_state; changed under unix_mutex */
	struct pipe *in, *out; /* connected: we read in, the peer reads out */
	struct sock *peer; /* connected: a reference (unix_mutex) */
	_Atomic bool shut_rd, shut_wr;
	_Atomic int err; /* a pending error for the next read that finds nothing (ECONNRESET) */
	_Atomic int sndbuf, rcvbuf; /* what SO_SNDBUF / SO_RCVBUF report (the rings stay 64 KiB) */
	int cred_pid; /* SO_PEERCRED's pid (unix_mutex); valid when has_cred */
	bool has_cred;
	struct unix_name name, peer_name; /* (unix_mutex) ours and the peer's */
	struct inode *bound; /* a path-bound socket's inode, a reference (unix_mutex) */
	struct list_node bind_node; /* on unix_bound while bound and not released (unix_mutex) */
	/* listeners */
	struct list_node queue; /* embryos, oldest first (unix_mutex) */
	struct list_node qnode; /* an embryo's place in its listener's queue (unix_mutex) */
	_Atomic int qlen; /* changed under unix_mutex */
	int backlog; /* (unix_mutex) */
	struct wait_queue wq; /* accept and connect waiters; poll of a listener */
};

static struct fs_mutex unix_mutex = {
	.lock = SPINLOCK_INIT,
	.wq = { SPINLOCK_INIT, LIST_INIT(unix_mutex.wq.waiters) },
};
static struct list_node unix_bound = LIST_INIT(unix_bound); /* (unix_mutex) bound socks */
static unsigned int unix_autobind_next; /* (unix_mutex) */

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

static struct sock *sock_new(void)
{
	struct sock *s = kmalloc(sizeof(*s));

	if (!s)
		return NULL;
	memset(s, 0, sizeof(*s));
	atomic_store(&s->refs, 1);
	atomic_store(&s->state, SS_UNCONNECTED);
	atomic_store(&s->sndbuf, SOCK_BUF);
	atomic_store(&s->rcvbuf, SOCK_BUF);
	list_init(&s->bind_node);
	list_init(&s->queue);
	list_init(&s->qnode);
	waitq_init(&s->wq);
	return s;
}

static void sock_put(struct sock *s)
{
	if (atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	if (s->in)
		pipe_unref(s->in);
	if (s->out)
		pipe_unref(s->out);
	if (s->bound)
		inode_put(s->bound);
	kfree(s);
}

static bool sock_connected(struct sock *s)
{
	return atomic_load_explicit(&s->state, memory_order_acquire) == SS_CONNECTED;
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

static bool ring_has_data(struct pipe *p)
{
	return pipe_poll_side(p, NULL, true) & POLLIN;
}

static long sock_recv(struct file *f, struct sock *s, void *ubuf, size_t n, unsigned int flags)
{
	bool nonblock = (flags & MSG_DONTWAIT) || (atomic_load(&f->flags) & O_NONBLOCK);
	size_t done = 0;

	if (flags & MSG_OOB)
		return -EOPNOTSUPP;
	if (!sock_connected(s))
		return -EINVAL; /* unix_stream_read_generic: not TCP_ESTABLISHED */
	for (;;) {
		long r;

		/* sock_error: a reset shows once, when there is nothing left to read */
		if (atomic_load(&s->err) && !ring_has_data(s->in)) {
			int e = atomic_exchange(&s->err, 0);

			if (e)
				return done ? (long)done : -e;
		}
		r = pipe_read_core(s->in, (char *)ubuf + done, n - done, nonblock, flags & MSG_PEEK,
				   atomic_load(&s->shut_rd));
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
	if (!sock_connected(s))
		return -ENOTCONN;
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
	unsigned int mask = 0;

	ksvc_poll_wait(pt, &s->wq);
	switch (atomic_load_explicit(&s->state, memory_order_acquire)) {
	case SS_LISTEN:
		return atomic_load(&s->qlen) ? POLLIN | POLLRDNORM : 0;
	case SS_CONNECTED:
		break;
	default: /* unix_poll: a stream socket in TCP_CLOSE hangs up, and is writable */
		return POLLOUT | POLLWRNORM | POLLWRBAND | POLLHUP;
	}
	unsigned int in = pipe_poll_side(s->in, pt, true), out = pipe_poll_side(s->out, pt, false);

	mask = in & (POLLIN | POLLRDNORM);
	if (atomic_load(&s->err))
		mask |= POLLERR;
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

	if (!atomic_exchange(flag, true) && sock_connected(s))
		pipe_end_close(rd ? s->in : s->out, rd);
}

/*
 * The end of a sock (its file closed, or an embryo its listener drops): no more name, no
 * more queue, both directions shut; the peer learns of unread bytes or of a connection never
 * accepted with ECONNRESET.  Drops the reference the file (or queue) held.
 */
static void sock_close(struct sock *s, bool embryo)
{
	struct list_node dropped, *pos, *tmp;
	struct sock *peer;
	bool connected;

	list_init(&dropped);
	fs_mutex_lock(&unix_mutex);
	connected = sock_connected(s);
	if (!list_empty(&s->bind_node))
		list_del_init(&s->bind_node);
	/* a listener's waiting connections go with it */
	list_for_each_safe(pos, tmp, &s->queue) {
		list_del_init(pos);
		list_add_tail(&dropped, pos);
	}
	atomic_store(&s->qlen, 0);
	peer = s->peer;
	s->peer = NULL;
	if (peer && (embryo || ring_has_data(s->in)))
		atomic_store(&peer->err, ECONNRESET);
	if (!connected)
		atomic_store_explicit(&s->state, SS_CLOSED, memory_order_release);
	fs_mutex_unlock(&unix_mutex);
	waitq_wake_all(&s->wq);
	if (connected) {
		sock_shutdown_side(s, true);
		sock_shutdown_side(s, false);
	}
	if (peer) {
		waitq_wake_all(&peer->wq);
		sock_put(peer);
	}
	list_for_each_safe(pos, tmp, &dropped) {
		list_del_init(pos);
		sock_close(list_entry(pos, struct sock, qnode), true);
	}
	sock_put(s);
}

static void sock_release(struct file *f)
{
	sock_close(f->priv, false);
}

static const struct file_ops sock_fops = {
	.read = sock_read,
	.write = sock_write,
	.poll = sock_poll,
	.release = sock_release,
};

/* A new file for s (the file takes the sock's reference): NULL when out of memory. */
static struct file *sock_file(struct sock *s, unsigned int flags)
{
	struct inode *ino = ramfs_inode_new(S_IFSOCK | 0777);
	struct file *f;

	if (!ino)
		return NULL;
	f = file_alloc(&sock_fops, ino, O_RDWR | (flags & O_NONBLOCK), s);
	inode_put(ino);
	return f;
}

/* Connect a and b with two fresh rings (two references each): 0 or -ENOMEM. */
static int sock_link_rings(struct sock *a, struct sock *b)
{
	struct pipe *p = pipe_alloc(2), *q = pipe_alloc(2);

	if (!p || !q) {
		for (int i = 0; i < 2; i++) {
			if (p)
				pipe_unref(p);
			if (q)
				pipe_unref(q);
		}
		return -ENOMEM;
	}
	a->in = b->out = p;
	a->out = b->in = q;
	return 0;
}

/* ---- socket(2), socketpair(2) ---- */

/* __sys_socket's and unix_create's checks, in their order: 0 or -errno. */
static long sock_check_args(uint64_t domain, uint64_t type, uint64_t protocol)
{
	if ((unsigned int)type & ~SOCK_TYPE_MASK & ~(unsigned int)(O_NONBLOCK | O_CLOEXEC))
		return -EINVAL;
	if ((int)domain < 0 || (int)domain >= NPROTO)
		return -EAFNOSUPPORT;
	if (((unsigned int)type & SOCK_TYPE_MASK) >= SOCK_MAX)
		return -EINVAL;
	if (domain != AF_UNIX)
		return -EAFNOSUPPORT; /* no other family is built */
	if (protocol && protocol != AF_UNIX)
		return -EPROTONOSUPPORT;
	if (((unsigned int)type & SOCK_TYPE_MASK) != SOCK_STREAM)
		return -ESOCKTNOSUPPORT; /* DGRAM and SEQPACKET not built; unix_create's for others */
	return 0;
}

static long sys_socket(uint64_t domain, uint64_t type, uint64_t protocol)
{
	unsigned int flags = (unsigned int)type & ~SOCK_TYPE_MASK;
	long err = sock_check_args(domain, type, protocol);
	struct sock *s;
	struct file *f;
	int fd;

	if (err)
		return err;
	s = sock_new();
	if (!s)
		return -ENOMEM;
	f = sock_file(s, flags);
	if (!f) {
		kfree(s);
		return -ENOMEM;
	}
	fd = fd_install(f, flags & O_CLOEXEC);
	if (fd < 0)
		file_put(f);
	return fd;
}
SYSCALL(__NR_socket, sys_socket);

static long sys_socketpair(uint64_t domain, uint64_t type, uint64_t protocol, uint64_t usv)
{
	unsigned int flags = (unsigned int)type & ~SOCK_TYPE_MASK;
	long err = sock_check_args(domain, type, protocol);
	struct sock *a, *b;
	struct file *fa = NULL, *fb = NULL;

	if (err)
		return err;
	a = sock_new();
	b = sock_new();
	if (!a || !b || sock_link_rings(a, b))
		goto nomem;
	/* each holds the other as its peer */
	atomic_store(&a->refs, 2);
	atomic_store(&b->refs, 2);
	a->peer = b;
	b->peer = a;
	a->cred_pid = b->cred_pid = proc_tgid(current_task());
	a->has_cred = b->has_cred = true;
	atomic_store(&a->state, SS_CONNECTED);
	atomic_store(&b->state, SS_CONNECTED);
	fa = sock_file(a, flags);
	fb = sock_file(b, flags);
	if (!fa || !fb)
		goto nomem_files;
	return fd_install_pair(fa, fb, flags & O_CLOEXEC, usv);
nomem_files:
	/* through the ops what has a file, by hand what has none */
	if (fa)
		file_put(fa);
	else
		sock_close(a, false);
	if (fb)
		file_put(fb);
	else
		sock_close(b, false);
	return -ENOMEM;
nomem:
	if (a)
		sock_put(a);
	if (b)
		sock_put(b);
	return -ENOMEM;
}
SYSCALL(__NR_socketpair, sys_socketpair);

/* ---- names: bind, listen, connect, accept ---- */

/* move_addr_to_kernel and unix_validate_addr: the name in *n (len bytes), 0 or -errno. */
static long name_from_user(uint64_t uaddr, uint64_t alen, struct unix_name *n)
{
	int len = (int)alen;

	memset(n, 0, sizeof(*n));
	if (len < 0 || len > SOCKADDR_STORAGE)
		return -EINVAL;
	if (len > (int)sizeof(struct sockaddr_un)) /* unix_validate_addr's bound, after the copy */
		return ksvc_copy_from_user(n->bytes, (const void *)uaddr, sizeof(n->bytes) - 1) ? -EFAULT
											  : -EINVAL;
	if (len && ksvc_copy_from_user(n->bytes, (const void *)uaddr, (size_t)len))
		return -EFAULT;
	n->len = len;
	return 0;
}

static bool name_valid(const struct unix_name *n)
{
	uint16_t family;

	memcpy(&family, n->bytes, sizeof(family));
	return n->len > SUN_PATH_OFF && family == AF_UNIX;
}

static bool name_abstract(const struct unix_name *n)
{
	return n->len > SUN_PATH_OFF && n->bytes[SUN_PATH_OFF] == 0;
}

/* unix_mkname_bsd: a path name ends at its first NUL; the length counts one NUL. */
static void name_fix_path(struct unix_name *n)
{
	n->bytes[n->len] = 0;
	n->len = SUN_PATH_OFF + (int)strlen((const char *)n->bytes + SUN_PATH_OFF) + 1;
}

/* The bound abstract socket named n, or NULL (unix_mutex held). */
static struct sock *find_abstract_locked(const struct unix_name *n)
{
	struct list_node *pos;

	list_for_each(pos, &unix_bound) {
		struct sock *o = list_entry(pos, struct sock, bind_node);

		if (!o->bound && o->name.len == n->len && !memcmp(o->name.bytes, n->bytes, (size_t)n->len))
			return o;
	}
	return NULL;
}

/* The bound socket whose path inode is ino, or NULL (unix_mutex held). */
static struct sock *find_inode_locked(struct inode *ino)
{
	struct list_node *pos;

	list_for_each(pos, &unix_bound) {
		struct sock *o = list_entry(pos, struct sock, bind_node);

		if (o->bound == ino)
			return o;
	}
	return NULL;
}

/* unix_autobind: an unused abstract name "\0" + 5 hex digits (unix_mutex held). */
static void autobind_locked(struct sock *s)
{
	static const char hex[] = "0123456789abcdef";
	struct unix_name n;

	for (unsigned int tries = 0; tries < 0x100000; tries++) {
		unsigned int v = unix_autobind_next++ & 0xfffff;
		uint16_t family = AF_UNIX;

		memset(&n, 0, sizeof(n));
		memcpy(n.bytes, &family, sizeof(family));
		for (int i = 0; i < 5; i++)
			n.bytes[SUN_PATH_OFF + 1 + i] = (uint8_t)hex[(v >> (4 * (4 - i))) & 0xf];
		n.len = SUN_PATH_OFF + 6;
		if (!find_abstract_locked(&n))
			break;
	}
	s->name = n;
	list_add_tail(&unix_bound, &s->bind_node);
}

/* unix_bind_bsd: a socket inode at the path, with a reference for s (unix_mutex held). */
static long bind_path_locked(struct sock *s, struct unix_name *n)
{
	struct proc *p = current_task()->proc;
	const char *path, *last;
	struct inode *base, *dir, *ino;
	size_t len;
	bool trailing;
	long err;

	name_fix_path(n);
	path = (const char *)n->bytes + SUN_PATH_OFF;
	err = vfs_base_get(AT_FDCWD, path, &base);
	if (err)
		return err;
	fs_mutex_lock(&vfs_lock);
	err = vfs_walk_parent_locked(base, path, &dir, &last, &len, &trailing);
	if (err)
		;
	else if (dir->fs_magic && dir->fs_magic != BPF_FS_MAGIC)
		err = -EACCES; /* /proc and /sys, as vfs_parent_begin */
	else if (vfs_name_is_dots(last, len) || ramfs_lookup_locked(dir, last, len))
		err = -EADDRINUSE; /* vfs_mknod's EEXIST */
	else if (trailing)
		err = -ENOENT; /* a name ending in "/" that does not exist */
	else if (dir->nlink == 0)
		err = -ENOENT;
	else if (s->name.len)
		err = -EINVAL; /* already bound: Linux makes the node, then undoes it */
	else if (!(ino = ramfs_inode_new(S_IFSOCK | (0777 & ~(p ? p->umask : 0)))))
		err = -ENOMEM;
	else if ((err = ramfs_link_locked(dir, last, len, ino)))
		inode_put_locked(ino);
	else {
		s->bound = ino; /* the creation reference */
		fsnotify_dir_locked(dir, IN_CREATE, last, len, ino, 0);
	}
	fs_mutex_unlock(&vfs_lock);
	inode_put(base);
	return err;
}

static long sys_bind(uint64_t fd, uint64_t uaddr, uint64_t alen)
{
	struct unix_name n;
	struct file *f;
	struct sock *s;
	long err = sock_get(fd, &f, &s);

	if (err)
		return err;
	err = name_from_user(uaddr, alen, &n);
	if (err)
		goto out;
	fs_mutex_lock(&unix_mutex);
	uint16_t family;

	memcpy(&family, n.bytes, sizeof(family));
	if (n.len == SUN_PATH_OFF && family == AF_UNIX) {
		if (!s->name.len)
			autobind_locked(s); /* an already bound socket: 0, as Linux */
	} else if (!name_valid(&n)) {
		err = -EINVAL;
	} else if (name_abstract(&n)) {
		if (s->name.len)
			err = -EINVAL;
		else if (find_abstract_locked(&n))
			err = -EADDRINUSE;
		else {
			s->name = n;
			list_add_tail(&unix_bound, &s->bind_node);
		}
	} else if (!(err = bind_path_locked(s, &n))) {
		s->name = n;
		list_add_tail(&unix_bound, &s->bind_node);
	}
	fs_mutex_unlock(&unix_mutex);
out:
	file_put(f);
	return err;
}
SYSCALL(__NR_bind, sys_bind);

static long sys_listen(uint64_t fd, uint64_t backlog)
{
	struct file *f;
	struct sock *s;
	long err = sock_get(fd, &f, &s);
	int b = (int)backlog;

	if (err)
		return err;
	if ((unsigned int)b > SOMAXCONN)
		b = SOMAXCONN; /* __sys_listen: min(backlog, somaxconn), as unsigned */
	fs_mutex_lock(&unix_mutex);
	int st = atomic_load(&s->state);

	if (!s->name.len || (st != SS_UNCONNECTED && st != SS_LISTEN)) {
		err = -EINVAL; /* unix_listen: unbound, or connected */
	} else {
		if (b > s->backlog)
			waitq_wake_all(&s->wq); /* room for waiting connects */
		s->backlog = b;
		s->cred_pid = proc_tgid(current_task()); /* init_peercred */
		s->has_cred = true;
		atomic_store(&s->state, SS_LISTEN);
	}
	fs_mutex_unlock(&unix_mutex);
	file_put(f);
	return err;
}
SYSCALL(__NR_listen, sys_listen);

/* unix_recvq_full: more than backlog connections wait already */
static bool listener_full(struct sock *l)
{
	return atomic_load(&l->qlen) > l->backlog;
}

static bool listener_room(void *ctx, size_t unused)
{
	struct sock *l = ctx;

	return atomic_load(&l->state) != SS_LISTEN || !listener_full(l);
}

/* The listener n names, with a reference, or -errno (unix_find_other); unix_mutex held on
 * success. */
static long find_listener(struct unix_name *n, struct sock **out)
{
	struct inode *ino = NULL;
	struct sock *l;
	long err;

	if (!name_abstract(n)) {
		name_fix_path(n);
		err = vfs_lookup_at(AT_FDCWD, (const char *)n->bytes + SUN_PATH_OFF, true, &ino);
		if (err)
			return err;
		if (!S_ISSOCK(ino->mode)) {
			inode_put(ino);
			return -ECONNREFUSED;
		}
	}
	fs_mutex_lock(&unix_mutex);
	l = ino ? find_inode_locked(ino) : find_abstract_locked(n);
	if (ino)
		inode_put(ino); /* a bound socket holds its own */
	if (!l) {
		fs_mutex_unlock(&unix_mutex);
		return -ECONNREFUSED;
	}
	atomic_fetch_add(&l->refs, 1);
	*out = l;
	return 0;
}

static long sys_connect(uint64_t fd, uint64_t uaddr, uint64_t alen)
{
	struct unix_name n;
	struct file *f;
	struct sock *s, *l, *e = NULL, rings = { 0 };
	long err = sock_get(fd, &f, &s);
	bool nonblock;

	if (err)
		return err;
	nonblock = atomic_load(&f->flags) & O_NONBLOCK;
	err = name_from_user(uaddr, alen, &n);
	if (!err && !name_valid(&n))
		err = -EINVAL;
	if (err)
		goto out;
	/* the server's end, made before any lock (unix_stream_connect) */
	e = sock_new();
	if (!e || sock_link_rings(&rings, e)) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		err = find_listener(&n, &l);
		if (err)
			goto out;
		/* unix_mutex held */
		if (atomic_load(&l->state) != SS_LISTEN) {
			err = -ECONNREFUSED;
			goto out_unlock;
		}
		if (!listener_full(l))
			break;
		if (nonblock) {
			err = -EAGAIN;
			goto out_unlock;
		}
		fs_mutex_unlock(&unix_mutex);
		err = fs_wait_event(&l->wq, listener_room, l, 0);
		sock_put(l);
		if (err)
			goto out;
	}
	switch (atomic_load(&s->state)) {
	case SS_UNCONNECTED:
		break;
	case SS_CONNECTED:
		err = -EISCONN;
		goto out_unlock;
	default:
		err = -EINVAL;
		goto out_unlock;
	}
	/* commit: s and e are each other's peers; e waits on l's queue */
	atomic_fetch_add(&s->refs, 1);
	atomic_fetch_add(&e->refs, 1);
	s->in = rings.in;
	s->out = rings.out;
	rings.in = rings.out = NULL;
	s->peer = e;
	e->peer = s;
	s->peer_name = l->name;
	e->name = l->name;
	e->peer_name = s->name;
	s->cred_pid = l->cred_pid; /* copy_peercred: the listener's, from listen() */
	s->has_cred = true;
	e->cred_pid = proc_tgid(current_task());
	e->has_cred = true;
	atomic_store_explicit(&e->state, SS_CONNECTED, memory_order_release);
	atomic_store_explicit(&s->state, SS_CONNECTED, memory_order_release);
	list_add_tail(&l->queue, &e->qnode);
	atomic_fetch_add(&l->qlen, 1);
	e = NULL;
	fs_mutex_unlock(&unix_mutex);
	waitq_wake_all(&l->wq);
	sock_put(l);
	goto out;
out_unlock:
	fs_mutex_unlock(&unix_mutex);
	sock_put(l);
out:
	if (rings.in) { /* never connected: the rings' other references */
		pipe_unref(rings.in);
		pipe_unref(rings.out);
	}
	if (e)
		sock_put(e);
	file_put(f);
	return err;
}
SYSCALL(__NR_connect, sys_connect);


static bool listener_ready(void *ctx, size_t unused)
{
	struct sock *l = ctx;

	return atomic_load(&l->state) != SS_LISTEN || atomic_load(&l->qlen);
}

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

/* A name as unix_getname returns it: unnamed is the family alone. */
static long name_to_user(const struct unix_name *n, uint64_t uaddr, uint64_t ulen)
{
	uint16_t family = AF_UNIX;

	if (!n->len)
		return addr_to_user(&family, sizeof(family), uaddr, ulen);
	return addr_to_user(n->bytes, n->len, uaddr, ulen);
}

static long sys_accept4(uint64_t fd, uint64_t uaddr, uint64_t ulen, uint64_t flags)
{
	struct file *f, *nf;
	struct sock *l, *e;
	struct unix_name peer;
	long err;
	int nfd;

	if (flags & ~(uint64_t)(O_NONBLOCK | O_CLOEXEC))
		return -EINVAL;
	err = sock_get(fd, &f, &l);
	if (err)
		return err;
	for (;;) {
		fs_mutex_lock(&unix_mutex);
		if (atomic_load(&l->state) != SS_LISTEN) {
			err = -EINVAL;
			break;
		}
		if (!list_empty(&l->queue)) {
			e = list_entry(l->queue.next, struct sock, qnode);
			list_del_init(&e->qnode);
			atomic_fetch_sub(&l->qlen, 1);
			peer = e->peer_name;
			break;
		}
		fs_mutex_unlock(&unix_mutex);
		if (atomic_load(&f->flags) & O_NONBLOCK) {
			file_put(f);
			return -EAGAIN;
		}
		err = fs_wait_event(&l->wq, listener_ready, l, 0);
		if (err) {
			file_put(f);
			return err;
		}
	}
	fs_mutex_unlock(&unix_mutex);
	if (err) {
		file_put(f);
		return err;
	}
	waitq_wake_all(&l->wq); /* room for a waiting connect */
	file_put(f);
	/* the embryo's queue reference moves to its file */
	nf = sock_file(e, (unsigned int)flags);
	if (!nf) {
		sock_close(e, false);
		return -ENOMEM;
	}
	if (uaddr && (err = name_to_user(&peer, uaddr, ulen))) {
		file_put(nf); /* the connection is lost, as Linux's accept */
		return err;
	}
	nfd = fd_install(nf, flags & O_CLOEXEC);
	if (nfd < 0)
		file_put(nf);
	return nfd;
}
SYSCALL(__NR_accept4, sys_accept4);

static long sys_accept(uint64_t fd, uint64_t uaddr, uint64_t ulen)
{
	return sys_accept4(fd, uaddr, ulen, 0);
}
SYSCALL(__NR_accept, sys_accept);

/* ---- the socket calls ---- */

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
	else if (uaddr && alen) /* a stream socket takes no address */
		r = sock_connected(s) ? -EISCONN : -EOPNOTSUPP;
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
	/* unix_copy_addr: the sender's name, nothing when it has none */
	if (r >= 0 && uaddr) {
		long e = addr_to_user(s->peer_name.bytes, s->peer_name.len, uaddr, ulen);

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
		if (m.msg_namelen < 0 || m.msg_namelen > SOCKADDR_STORAGE)
			return -EINVAL;
		return sock_connected(s) ? -EISCONN : -EOPNOTSUPP;
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
		/* the sender's name (none when unnamed), no control data, no flags */
		uint64_t zero = 0;
		uint32_t noflags = 0;

		if ((m.msg_name && addr_to_user(s->peer_name.bytes, s->peer_name.len, m.msg_name,
						umsg + offsetof(struct user_msghdr, msg_namelen))) ||
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

/* getsockname and getpeername (unix_getname): an unnamed socket is {AF_UNIX} alone */
static long sock_name(uint64_t fd, uint64_t uaddr, uint64_t ulen, bool peer)
{
	struct file *f;
	struct sock *s;
	struct unix_name n;
	long r = sock_get(fd, &f, &s);

	if (r)
		return r;
	fs_mutex_lock(&unix_mutex);
	n = peer ? s->peer_name : s->name;
	if (peer && !sock_connected(s))
		r = -ENOTCONN;
	fs_mutex_unlock(&unix_mutex);
	file_put(f);
	return r ? r : name_to_user(&n, uaddr, ulen);
}

static long sys_getsockname(uint64_t fd, uint64_t uaddr, uint64_t ulen)
{
	return sock_name(fd, uaddr, ulen, false);
}
SYSCALL(__NR_getsockname, sys_getsockname);

static long sys_getpeername(uint64_t fd, uint64_t uaddr, uint64_t ulen)
{
	return sock_name(fd, uaddr, ulen, true);
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
	case SO_PROTOCOL: case SO_PASSCRED: break;
	case SO_ERROR: v[0] = atomic_exchange(&s->err, 0); break; /* sock_error clears it */
	case SO_ACCEPTCONN: v[0] = atomic_load(&s->state) == SS_LISTEN; break;
	case SO_SNDBUF: v[0] = atomic_load(&s->sndbuf); break;
	case SO_RCVBUF: v[0] = atomic_load(&s->rcvbuf); break;
	case SO_PEERCRED: /* struct ucred: the peer's process at connect (root), or none */
		fs_mutex_lock(&unix_mutex);
		if (s->has_cred)
			v[0] = s->cred_pid;
		else
			v[1] = v[2] = -1; /* cred_to_ucred without a peer */
		fs_mutex_unlock(&unix_mutex);
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
