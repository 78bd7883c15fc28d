# Host cmocka tests: tests/unit/test_<name>.c, one per portable file; each folder's module.mk
# adds its own (UNIT_TESTS += name, UNIT_SRCS_name := its sources, UNIT_LIBS_name: host libraries).
# Every test links the fakes of the seam (FAKE_SRCS) and the kernel's primitives (KLIB_SRCS).
FAKE_SRCS += tests/fakes/ksvc_fake.c tests/fakes/dbg_fake.c

# The parser tests' fixtures (test_cpio, test_elf), made at build time by the real tools:
# archives written by GNU cpio (newc and crc) and tiny static aarch64 programs (ET_EXEC and
# static-pie).  The tests find them under
# PARSER_FIXTURES, compiled in as FIXTURE_DIR (relative to the top directory, where
# tests/unit/run.sh runs them); test_elf also runs $(CROSS)readelf on the programs.
PARSER_FIXTURES := $(BUILD)/fixtures
PARSER_CPIO_FIXTURES := $(PARSER_FIXTURES)/sample-newc.cpio $(PARSER_FIXTURES)/sample-crc.cpio
PARSER_ELF_FIXTURES := $(PARSER_FIXTURES)/hello-static $(PARSER_FIXTURES)/hello-static-pie

$(BUILD)/h/tests/unit/test_cpio.o $(BUILD)/h/tests/unit/test_elf.o: \
	HCFLAGS += -DFIXTURE_DIR='"$(PARSER_FIXTURES)"' -DREADELF='"$(CROSS)readelf"'
$(BUILD)/unit/test_cpio: $(PARSER_CPIO_FIXTURES)
$(BUILD)/unit/test_elf: $(PARSER_ELF_FIXTURES)

# A small tree: a directory, a nested file, an empty file, a symlink, and a 5000-byte file.
$(PARSER_FIXTURES)/cpio-tree/.ok:
	$(Q)rm -rf $(dir $@) && mkdir -p $(dir $@)bin $(dir $@)etc
	$(Q)printf 'hello\n' > $(dir $@)etc/motd
	$(Q): > $(dir $@)empty
	$(Q)ln -s ../etc/motd $(dir $@)bin/link
	$(Q)awk 'BEGIN { for (i = 0; i < 5000; i++) printf "%c", 97 + i % 26 }' > $(dir $@)big
	$(Q)touch $@

$(PARSER_FIXTURES)/sample-newc.cpio: $(PARSER_FIXTURES)/cpio-tree/.ok
	$(Q)cd $(dir $<) && find . ! -name .ok | LC_ALL=C sort | cpio -o -H newc --quiet > $(abspath $@)

$(PARSER_FIXTURES)/sample-crc.cpio: $(PARSER_FIXTURES)/cpio-tree/.ok
	$(Q)cd $(dir $<) && find . ! -name .ok | LC_ALL=C sort | cpio -o -H crc --quiet > $(abspath $@)

$(PARSER_FIXTURES)/hello-static: tests/unit/fixtures/hello.c
	@mkdir -p $(dir $@)
	$(Q)$(CROSS)gcc -static -O2 -o $@ $<

$(PARSER_FIXTURES)/hello-static-pie: tests/unit/fixtures/hello.c
	@mkdir -p $(dir $@)
	$(Q)$(CROSS)gcc -static-pie -fPIE -O2 -o $@ $<
