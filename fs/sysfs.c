/*
 * sysfs.c - /sys: the CPU, node, memory and PMU attributes perf tools read, as Linux 6.1
 * shows them on QEMU virt.
 *
 * What it does: under /sys (statfs SYSFS_MAGIC):
 *   devices/system/cpu/{online,possible,present,kernel_max}, cpuN/online,
 *     cpuN/regs/identification/{midr_el1,revidr_el1} ("0x%016lx"), cpuN/topology/ (core_id N,
 *     physical_package_id 0, cluster_id 0, core_cpus(_list), thread_siblings(_list): CPU N;
 *     package_cpus(_list), core_siblings(_list), cluster_cpus(_list): all CPUs; no die_id, as
 *     arm64 6.1 has none), cpuN/cache/index0 (L1 Data) and index1 (L1 Instruction);
 *   devices/system/node/{online,possible,has_cpu,has_memory}, node0/{cpulist,cpumap,meminfo};
 *   devices/system/memory/block_size_bytes (128 MiB, "%lx" as Linux);
 *   kernel/notes (the kernel's ELF notes, raw: its NT_GNU_BUILD_ID, as perf buildid-list reads);
 *   kernel/btf/vmlinux (the kernel's BTF, raw, mode 0444, st_size its size, as
 *     kernel/bpf/sysfs_btf.c: what libbpf's CO-RE and bpftool btf dump read);
 *   bus/event_source/devices/<pmu>/ for each PMU perf registered (perf_sysfs_pmus): type,
 *     cpus, format/, events/, caps/ (Linux makes these symlinks to /sys/devices/<pmu>;
 *     here they are the directories themselves).
 * CPU and PMU entries are built at the first lookup or listing of their directory (the
 * PMUs register after vfs_init); online and the cpulists are generated at each read.
 *
 * Assumptions: REVIDR_EL1 reads 0 under QEMU (not read); one cluster, one package, one NUMA
 * node.  midr_el1 is read on the CPU it belongs to (pseudo_cpu_midr).
 *
 * ABI: drivers/base/cpu.c, topology.c (cpumask "%*pb": hex, cpulist "%*pbl"),
 * arch/arm64/kernel/cpuinfo.c (regs/identification), drivers/base/node.c, memory.c; every
 * attribute ends in a newline; sysfs attributes without store refuse O_WRONLY with EACCES.
 */
#include <stdatomic.h>
#include <kern/compiler.h>
#include <kern/errno.h>
#include <kern/format.h>
#include <kern/mm.h>
#include <kern/printk.h>
#include <kern/sched.h>
#include <kern/string.h>
#include <linux/stat.h>
#include <perf/perf.h>
#include <bpf/bpf.h>
#include "fs_internal.h"

#define SYSFS_MEMORY_BLOCK (128ull << 20)

/* ---- generated attributes ---- */

enum cpu_attr {
	CA_ONLINE_LIST, /* cpu/online */
	CA_POSSIBLE_LIST, /* cpu/possible, present, node0/cpulist, *_cpus_list of all */
	CA_ALL_MASK, /* package_cpus, node0/cpumap... */
	CA_SELF_LIST, /* core_cpus_list of cpuN: "N" */
	CA_SELF_MASK, /* core_cpus of cpuN */
	CA_SELF_ONLINE, /* cpuN/online: "1" or "0" */
	CA_MIDR,
	CA_NODE_MEMINFO,
};

static void mask_hex(struct pbuf *b, uint64_t mask)
{
	/* "%*pb": 32-bit groups separated by commas, the first without leading zeros */
	if (mask >> 32)
		pb_printf(b, "%x,%08x", (unsigned int)(mask >> 32), (unsigned int)mask);
	else
		pb_printf(b, "%x", (unsigned int)mask);
}

static uint64_t all_mask(void)
{
	return nr_cpus_possible >= 64 ? ~0ull : (1ull << nr_cpus_possible) - 1;
}

/* parg: enum cpu_attr in the low 16 bits, the CPU number above. */
static int cpu_attr_show(struct inode *ino, struct pbuf *b)
{
	unsigned int cpu = (unsigned int)(ino->parg >> 16);
	uint64_t tot = mem_total_bytes(), free = mem_free_bytes();

	switch ((enum cpu_attr)(ino->parg & 0xffff)) {
	case CA_ONLINE_LIST:
		pb_cpu_list(b, true);
		break;
	case CA_POSSIBLE_LIST:
		pb_cpu_list(b, false);
		break;
	case CA_ALL_MASK:
		mask_hex(b, all_mask());
		break;
	case CA_SELF_LIST:
		pb_printf(b, "%u", cpu);
		break;
	case CA_SELF_MASK:
		mask_hex(b, 1ull << cpu);
		break;
	case CA_SELF_ONLINE:
		pb_printf(b, "%d", cpu < nr_cpus_possible && atomic_load(&cpus[cpu].online) ? 1 : 0);
		break;
	case CA_MIDR:
		pb_printf(b, "0x%016lx", (unsigned long)pseudo_cpu_midr(cpu));
		break;
	case CA_NODE_MEMINFO:
		pb_printf(b, "Node 0 MemTotal:       %8lu kB\nNode 0 MemFree:        %8lu kB\n"
			  "Node 0 MemUsed:        %8lu kB", (unsigned long)(tot / 1024),
			  (unsigned long)(free / 1024), (unsigned long)((tot - free) / 1024));
		break;
	}
	pb_putn(b, "\n", 1);
	return 0;
}

static const struct pseudo_ops cpu_attr_ops = { .show = cpu_attr_show };

static void attr_locked(struct inode *dir, const char *name, enum cpu_attr a, unsigned int cpu)
{
	fs_mutex_assert_held(&vfs_lock);
	pseudo_file_locked(dir, name, 0444, &cpu_attr_ops, (long)cpu << 16 | a);
}

/* ---- /sys/devices/system/cpu ---- */

static void build_cpu_locked(struct inode *cpudir, unsigned int cpu)
{
	fs_mutex_assert_held(&vfs_lock);
	struct inode *d, *regs, *id, *topo, *cache, *ix;
	char nm[16];

	ksnprintf(nm, sizeof(nm), "cpu%u", cpu);
	d = pseudo_mkdir_locked(cpudir, nm, 0755, NULL, 0);
	if (!d)
		return;
	attr_locked(d, "online", CA_SELF_ONLINE, cpu);
	regs = pseudo_mkdir_locked(d, "regs", 0755, NULL, 0);
	id = regs ? pseudo_mkdir_locked(regs, "identification", 0755, NULL, 0) : NULL;
	if (id) {
		attr_locked(id, "midr_el1", CA_MIDR, cpu);
		pseudo_text_locked(id, "revidr_el1", "0x%016lx\n", 0ul);
	}
	topo = pseudo_mkdir_locked(d, "topology", 0755, NULL, 0);
	if (topo) {
		attr_locked(topo, "cluster_cpus", CA_ALL_MASK, cpu);
		attr_locked(topo, "cluster_cpus_list", CA_POSSIBLE_LIST, cpu);
		pseudo_text_locked(topo, "cluster_id", "0\n");
		attr_locked(topo, "core_cpus", CA_SELF_MASK, cpu);
		attr_locked(topo, "core_cpus_list", CA_SELF_LIST, cpu);
		pseudo_text_locked(topo, "core_id", "%u\n", cpu);
		attr_locked(topo, "core_siblings", CA_ALL_MASK, cpu);
		attr_locked(topo, "core_siblings_list", CA_POSSIBLE_LIST, cpu);
		attr_locked(topo, "package_cpus", CA_ALL_MASK, cpu);
		attr_locked(topo, "package_cpus_list", CA_POSSIBLE_LIST, cpu);
		pseudo_text_locked(topo, "physical_package_id", "0\n");
		attr_locked(topo, "thread_siblings", CA_SELF_MASK, cpu);
		attr_locked(topo, "thread_siblings_list", CA_SELF_LIST, cpu);
	}
	cache = pseudo_mkdir_locked(d, "cache", 0755, NULL, 0);
	for (int i = 0; cache && i < 2; i++) {
		ksnprintf(nm, sizeof(nm), "index%d", i);
		ix = pseudo_mkdir_locked(cache, nm, 0755, NULL, 0);
		if (!ix)
			continue;
		pseudo_text_locked(ix, "level", "1\n");
		attr_locked(ix, "shared_cpu_list", CA_SELF_LIST, cpu);
		attr_locked(ix, "shared_cpu_map", CA_SELF_MASK, cpu);
		pseudo_text_locked(ix, "type", i ? "Instruction\n" : "Data\n");
	}
}

static void cpu_dir_refresh(struct inode *dir, const char *name, size_t len)
{
	if (dir->parg)
		return;
	dir->parg = 1; /* built (vfs_lock) */
	for (unsigned int i = 0; i < nr_cpus_possible; i++)
		build_cpu_locked(dir, i);
}

static const struct pseudo_ops cpu_dir_ops = { .refresh = cpu_dir_refresh };

/* ---- /sys/bus/event_source/devices ---- */

static void attr_dir_locked(struct inode *d, const char *name, const struct perf_sysfs_attr *a,
			    unsigned int n)
{
	fs_mutex_assert_held(&vfs_lock);
	struct inode *sub;

	if (!n)
		return;
	sub = pseudo_mkdir_locked(d, name, 0755, NULL, 0);
	for (unsigned int i = 0; sub && i < n; i++)
		pseudo_text_locked(sub, a[i].name, "%s\n", a[i].value);
}

static void emit_pmu(const struct perf_sysfs_pmu *pmu, void *arg)
{
	struct inode *d = pseudo_mkdir_locked(arg, pmu->name, 0755, NULL, 0);

	if (!d)
		return;
	pseudo_text_locked(d, "type", "%d\n", pmu->type);
	if (pmu->has_cpus)
		attr_locked(d, "cpus", CA_POSSIBLE_LIST, 0);
	attr_dir_locked(d, "format", pmu->format, pmu->nr_format);
	attr_dir_locked(d, "events", pmu->events, pmu->nr_events);
	attr_dir_locked(d, "caps", pmu->caps, pmu->nr_caps);
}

static void pmu_dir_refresh(struct inode *dir, const char *name, size_t len)
{
	if (dir->parg)
		return;
	if (perf_sysfs_pmus(emit_pmu, dir) > 0)
		dir->parg = 1; /* built; before perf_init there is nothing to show yet */
}

static const struct pseudo_ops pmu_dir_ops = { .refresh = pmu_dir_refresh };

/* ---- the tree ---- */

static struct inode *mkdirs_locked(struct inode *d, const char *const *names, unsigned int n)
{
	fs_mutex_assert_held(&vfs_lock);
	for (unsigned int i = 0; d && i < n; i++) {
		struct ramfs_dirent *de = ramfs_lookup_locked(d, names[i], strlen(names[i]));

		d = de ? de->inode : pseudo_mkdir_locked(d, names[i], 0755, NULL, 0);
	}
	return d;
}

extern const char __start_notes[], __stop_notes[]; /* linker.ld: .note.gnu.build-id */

static int notes_show(struct inode *ino, struct pbuf *b)
{
	pb_putn(b, __start_notes, (size_t)(__stop_notes - __start_notes));
	return 0;
}

static const struct pseudo_ops notes_ops = { .show = notes_show };

/* linker.ld: .BTF, the kernel's own types as pahole encodes them (kernel/btf.S) */
extern const char __start_BTF[], __stop_BTF[];

void sysfs_init(struct inode *sysdir)
{
	static const char *const cpu_path[] = { "devices", "system", "cpu" };
	static const char *const node_path[] = { "devices", "system", "node" };
	static const char *const mem_path[] = { "devices", "system", "memory" };
	static const char *const pmu_path[] = { "bus", "event_source", "devices" };
	static const char *const kern_path[] = { "kernel" };
	static const char *const btf_path[] = { "kernel", "btf" };
	static const char *const bpf_path[] = { "fs", "bpf" }; /* where bpffs is mounted */
	static const char *const cgroup_path[] = { "fs", "cgroup" }; /* and cgroup2 */
	struct inode *d;

	fs_mutex_lock(&vfs_lock);
	sysdir->fs_magic = SYSFS_MAGIC;
	d = mkdirs_locked(sysdir, cpu_path, 3);
	if (d) {
		d->pseudo = &cpu_dir_ops;
		attr_locked(d, "online", CA_ONLINE_LIST, 0);
		attr_locked(d, "possible", CA_POSSIBLE_LIST, 0);
		attr_locked(d, "present", CA_POSSIBLE_LIST, 0);
		pseudo_text_locked(d, "kernel_max", "%u\n", 255u);
	}
	d = mkdirs_locked(sysdir, node_path, 3);
	if (d) {
		pseudo_text_locked(d, "online", "0\n");
		pseudo_text_locked(d, "possible", "0\n");
		pseudo_text_locked(d, "has_cpu", "0\n");
		pseudo_text_locked(d, "has_memory", "0\n");
		d = pseudo_mkdir_locked(d, "node0", 0755, NULL, 0);
	}
	if (d) {
		attr_locked(d, "cpulist", CA_POSSIBLE_LIST, 0);
		attr_locked(d, "cpumap", CA_ALL_MASK, 0);
		attr_locked(d, "meminfo", CA_NODE_MEMINFO, 0);
	}
	d = mkdirs_locked(sysdir, mem_path, 3);
	if (d)
		pseudo_text_locked(d, "block_size_bytes", "%lx\n", (unsigned long)SYSFS_MEMORY_BLOCK);
	d = mkdirs_locked(sysdir, kern_path, 1);
	if (d)
		pseudo_file_locked(d, "notes", 0444, &notes_ops, 0);
	d = mkdirs_locked(sysdir, btf_path, 2);
	if (d)
		pseudo_blob_locked(d, "vmlinux", 0444, __start_BTF, (size_t)(__stop_BTF - __start_BTF));
	/* the same bytes as BTF object 1, the first BTF id, before any program's */
	if (bpf_btf_vmlinux_init(__start_BTF, (uint32_t)(__stop_BTF - __start_BTF)))
		printk("bpf: the kernel's BTF (%lu bytes) does not parse\n",
		       (unsigned long)(__stop_BTF - __start_BTF));
	mkdirs_locked(sysdir, bpf_path, 2);
	mkdirs_locked(sysdir, cgroup_path, 2);
	d = mkdirs_locked(sysdir, pmu_path, 3);
	if (d)
		d->pseudo = &pmu_dir_ops;
	fs_mutex_unlock(&vfs_lock);
}
