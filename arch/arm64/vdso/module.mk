# arch/arm64/vdso: the vDSO, a small ELF shared object of its own (C and assembly, its own
# linker script), built with the cross compiler before the kernel and linked into it as data
# (image.S).  check-vdso.sh fails the build when the image needs runtime relocation, exports
# anything but the four LINUX_2.6.39 symbols, or lacks its hash tables, versions or build-id.
# Included from arch/arm64/module.mk: the variables the top-level Makefile sets after its
# includes (KCC, UAPI, GCC_INC, ...) are used in recipes only, or spelled out.
VDSO_OUT := $(BUILD)/vdso
VDSO_OBJS := $(VDSO_OUT)/vgettime.o $(VDSO_OUT)/sigreturn.o $(VDSO_OUT)/note.o
VDSO_SO := $(VDSO_OUT)/vdso.so
VDSO_SYMS_H := $(VDSO_OUT)/vdso-syms.h
# position independent, no stack protector or builtins (nothing to call), no unwind tables
# (Linux 6.1's image has none: see sigreturn.S); x18 left alone (the platform register)
VDSO_CFLAGS = -std=gnu11 -O2 -g -fPIC -ffreestanding -nostdinc -isystem $(GCC_INC) \
	-fno-stack-protector -fno-builtin -fno-common -mgeneral-regs-only -ffixed-x18 \
	-mbranch-protection=none -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-fno-omit-frame-pointer \
	$(WARN) -Iarch/arm64/include -I$(UAPI) -MMD -MP
VDSO_LDFLAGS := -shared -nostdlib -soname=linux-vdso.so.1 --hash-style=both -Bsymbolic \
	--build-id=sha1 -z max-page-size=4096 -z noexecstack --no-undefined -n

$(VDSO_OUT)/%.o: arch/arm64/vdso/%.c $(BUILD)/uapi/.ok
	@mkdir -p $(dir $@)
	$(Q)$(KCC) $(VDSO_CFLAGS) -c $< -o $@

$(VDSO_OUT)/%.o: arch/arm64/vdso/%.S $(BUILD)/uapi/.ok
	@mkdir -p $(dir $@)
	$(Q)$(KCC) $(VDSO_CFLAGS) -D__ASSEMBLY__ -c $< -o $@

$(VDSO_OUT)/vdso.so.dbg: $(VDSO_OBJS) arch/arm64/vdso/vdso.lds
	$(Q)$(KLD) $(VDSO_LDFLAGS) -T arch/arm64/vdso/vdso.lds $(VDSO_OBJS) -o $@

$(VDSO_SO): $(VDSO_OUT)/vdso.so.dbg arch/arm64/vdso/check-vdso.sh
	$(Q)$(KOBJCOPY) -S $< $@.tmp
	$(Q)sh arch/arm64/vdso/check-vdso.sh $@.tmp $(CROSS)readelf
	$(Q)mv $@.tmp $@

# the kernel's view of the image: each exported symbol's offset (VDSO_SYM_<name>)
$(VDSO_SYMS_H): $(VDSO_SO) arch/arm64/vdso/module.mk
	$(Q)$(CROSS)nm -D --defined-only $< | \
		awk '$$2 ~ /^[Tt]$$/ { sub(/@.*/, "", $$3); printf "#define VDSO_SYM_%s 0x%sull\n", $$3, $$1 }' > $@.tmp
	$(Q)mv $@.tmp $@

ASRCS += arch/arm64/vdso/image.S
$(BUILD)/k/arch/arm64/vdso/image.o: $(VDSO_SO)
$(BUILD)/k/arch/arm64/vdso/image.o: KASFLAGS += -DVDSO_SO_PATH='"$(VDSO_SO)"'
$(BUILD)/k/kernel/vdso.o: $(VDSO_SYMS_H)
$(BUILD)/k/kernel/vdso.o: KCFLAGS += -I$(VDSO_OUT)

-include $(VDSO_OBJS:.o=.d)
