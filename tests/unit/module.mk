# Host cmocka tests: tests/unit/test_<name>.c, one per portable file.  Add the name here.
# A test needing extra host libraries sets UNIT_LIBS_<name>.
FAKE_SRCS += tests/fakes/ksvc_fake.c tests/fakes/dbg_fake.c
UNIT_TESTS +=
