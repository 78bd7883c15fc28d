# Our userland perf (perf stat, perf record): a static aarch64 glibc program
# that also runs on real Linux.
UPROGS += perf
perf_SRCS := tools/perf/perf.c tools/perf/events.c tools/perf/stat.c tools/perf/record.c \
	tools/perf/perfdata.c
perf_LIBS := -lm
