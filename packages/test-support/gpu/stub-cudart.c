// A stand-in for libcudart for dry runs of the GPU test project on a machine
// without a GPU. NOT evidence that anything works on a GPU: "device" memory is
// host memory (POSIX shared memory, so CUDA IPC handles open across
// processes), copies are memmove, there are two fake devices.
//
// It is stricter than CUDA about memory that was freed, so that a CPU machine
// catches an early free for sure: every live block (device, pinned, imported)
// is in a registry; a freed block is filled with 0xDB and kept mapped in a
// quarantine (its address is not handed out again), and a copy from or to a
// freed block, or past the end of a live one, fails with
// cudaErrorInvalidValue (1). Freeing what is not live fails the same way.
// cudaPointerGetAttributes, cudaHostGetFlags and cudaMemGetInfo answer from
// the registry (each device has 8 GiB).
//
// Build:  gcc -shared -fPIC -o /tmp/stubcuda/libcudart.so
//            test/gpu/stub-cudart.c -lpthread -lrt
// Run:    LD_LIBRARY_PATH=/tmp/stubcuda
//         TRITON_NODE_CUDART=/tmp/stubcuda/libcudart.so
//         node node_modules/vitest/vitest.mjs run --project gpu
//         (all three on one command line)
//
// (LD_LIBRARY_PATH makes the fake engine's own dlopen("libcudart.so") find it;
// TRITON_NODE_CUDART points the addon at it.) Entry points and their
// signatures follow the CUDA runtime's; only what the addon and the fake
// engine use is here.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { kInvalidValue = 1, kOutOfMemory = 2 };
enum Kind { kDevice, kPinned };
static const size_t kDeviceBytes = (size_t)8 << 30;
static const size_t kQuarantineBytes = (size_t)512 << 20;

typedef struct {
  unsigned char bytes[64];
} Handle;
typedef struct Block {
  void* ptr;
  size_t size;
  int kind;
  int device;
  unsigned int flags;
  char name[48];
  int imported;
  struct Block* next;
} Block;
static Block* live;
static Block* freed;  // quarantine, newest first
static size_t quarantined;
static size_t device_used[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static __thread int current = 0;
static int counter;

static size_t mapped(const Block* b) { return b->size ? b->size : 1; }

// The live block holding p (anywhere inside it).
static Block* holding(const Block* list, const void* p) {
  const char* c = p;
  for (const Block* b = list; b; b = b->next) {
    const char* start = b->ptr;
    if (c >= start && c < start + mapped(b)) return (Block*)b;
  }
  return NULL;
}

static Block* take_live(void* p) {
  Block** pp = &live;
  while (*pp && (*pp)->ptr != p) pp = &(*pp)->next;
  Block* b = *pp;
  if (b) *pp = b->next;
  return b;
}

static void release_memory(Block* b) {
  if (b->kind == kPinned) {
    free(b->ptr);
  } else {
    munmap(b->ptr, mapped(b));
  }
  free(b);
}

// Poisons a block taken off the live list and keeps it mapped; the oldest
// quarantined blocks go once the quarantine is full. Called with mu held.
static void quarantine(Block* b) {
  memset(b->ptr, 0xDB, mapped(b));
  if (b->kind == kDevice) shm_unlink(b->name);
  b->next = freed;
  freed = b;
  quarantined += mapped(b);
  while (quarantined > kQuarantineBytes && freed && freed->next) {
    Block** pp = &freed;
    while ((*pp)->next) pp = &(*pp)->next;
    Block* oldest = *pp;
    *pp = NULL;
    quarantined -= mapped(oldest);
    release_memory(oldest);
  }
}

static void add_live(Block* b) {
  b->next = live;
  live = b;
}

// 0 when [p, p + n) may be copied: inside one live block, or memory the stub
// does not know (pageable host memory); kInvalidValue when it touches a freed
// block or runs past the end of a live one.
static int check_range(const void* p, size_t n) {
  if (n == 0) return 0;
  const char* start = p;
  const char* end = start + n;
  Block* b = holding(live, p);
  if (b) return end <= (char*)b->ptr + mapped(b) ? 0 : kInvalidValue;
  for (const Block* f = freed; f; f = f->next) {
    const char* fs = f->ptr;
    if (start < fs + mapped(f) && fs < end) return kInvalidValue;
  }
  return 0;
}

int cudaGetDeviceCount(int* n) {
  *n = 2;
  return 0;
}
int cudaGetDevice(int* d) {
  *d = current;
  return 0;
}
int cudaSetDevice(int d) {
  if (d < 0 || d > 1) return 101;
  current = d;
  return 0;
}
int cudaMalloc(void** p, size_t n) {
  pthread_mutex_lock(&mu);
  if (device_used[current] + n > kDeviceBytes) {
    pthread_mutex_unlock(&mu);
    return kOutOfMemory;
  }
  Block* b = calloc(1, sizeof(Block));
  snprintf(b->name, sizeof b->name, "/stubcuda-%d-%d", (int)getpid(),
           counter++);
  int fd = shm_open(b->name, O_CREAT | O_RDWR, 0600);
  if (fd < 0 || ftruncate(fd, n ? n : 1) != 0) {
    if (fd >= 0) close(fd);
    free(b);
    pthread_mutex_unlock(&mu);
    return kOutOfMemory;
  }
  b->ptr = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  b->size = n;
  b->kind = kDevice;
  b->device = current;
  device_used[current] += n;
  add_live(b);
  *p = b->ptr;
  pthread_mutex_unlock(&mu);
  return 0;
}
static int free_block(void* p, int kind) {
  if (p == NULL) return 0;
  pthread_mutex_lock(&mu);
  Block* b = holding(live, p);
  if (!b || b->ptr != p || b->kind != kind || b->imported) {
    pthread_mutex_unlock(&mu);
    return kInvalidValue;
  }
  take_live(p);
  if (kind == kDevice) device_used[b->device] -= b->size;
  quarantine(b);
  pthread_mutex_unlock(&mu);
  return 0;
}
int cudaFree(void* p) { return free_block(p, kDevice); }
int cudaHostAlloc(void** p, size_t n, unsigned int f) {
  void* mem = malloc(n ? n : 1);
  if (!mem) return kOutOfMemory;
  pthread_mutex_lock(&mu);
  Block* b = calloc(1, sizeof(Block));
  b->ptr = mem;
  b->size = n;
  b->kind = kPinned;
  b->flags = f;
  add_live(b);
  pthread_mutex_unlock(&mu);
  *p = mem;
  return 0;
}
int cudaFreeHost(void* p) { return free_block(p, kPinned); }
int cudaMemcpy(void* d, const void* s, size_t n, int k) {
  (void)k;
  pthread_mutex_lock(&mu);
  int rc = check_range(s, n);
  if (rc == 0) rc = check_range(d, n);
  pthread_mutex_unlock(&mu);
  if (rc != 0) return rc;
  memmove(d, s, n);
  return 0;
}
// cudaPointerAttributes begins { int type; int device; void* devicePointer;
// void* hostPointer; }: type 0 unregistered, 1 host, 2 device.
int cudaPointerGetAttributes(void* attributes, const void* p) {
  struct {
    int type;
    int device;
    void* device_pointer;
    void* host_pointer;
  } a = {0, -2, NULL, NULL};
  pthread_mutex_lock(&mu);
  Block* b = holding(live, p);
  if (b) {
    a.type = b->kind == kPinned ? 1 : 2;
    a.device = b->kind == kPinned ? 0 : b->device;
    a.device_pointer = (void*)p;
    a.host_pointer = b->kind == kPinned ? (void*)p : NULL;
  }
  pthread_mutex_unlock(&mu);
  memcpy(attributes, &a, sizeof a);
  return 0;
}
int cudaHostGetFlags(unsigned int* flags, void* p) {
  pthread_mutex_lock(&mu);
  Block* b = holding(live, p);
  int rc = b && b->kind == kPinned ? 0 : kInvalidValue;
  if (rc == 0) *flags = b->flags;
  pthread_mutex_unlock(&mu);
  return rc;
}
int cudaMemGetInfo(size_t* free_bytes, size_t* total) {
  pthread_mutex_lock(&mu);
  *free_bytes = kDeviceBytes - device_used[current];
  *total = kDeviceBytes;
  pthread_mutex_unlock(&mu);
  return 0;
}
int cudaIpcGetMemHandle(Handle* h, void* p) {
  pthread_mutex_lock(&mu);
  Block* b = holding(live, p);
  if (!b || b->ptr != p || b->kind != kDevice || b->imported) {
    pthread_mutex_unlock(&mu);
    return kInvalidValue;
  }
  memset(h, 0, sizeof *h);
  memcpy(h->bytes, b->name, strlen(b->name));
  memcpy(h->bytes + 48, &b->size, sizeof b->size);
  pthread_mutex_unlock(&mu);
  return 0;
}
int cudaIpcOpenMemHandle(void** p, Handle h, unsigned int f) {
  (void)f;
  char name[49] = {0};
  memcpy(name, h.bytes, 48);
  size_t size;
  memcpy(&size, h.bytes + 48, sizeof size);
  char mine[32];
  snprintf(mine, sizeof mine, "/stubcuda-%d-", (int)getpid());
  if (strncmp(name, mine, strlen(mine)) == 0)
    return 201;  // own handle: CUDA refuses
  int fd = shm_open(name, O_RDWR, 0600);
  if (fd < 0) return 400;
  void* ptr =
      mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  pthread_mutex_lock(&mu);
  Block* b = calloc(1, sizeof(Block));
  b->ptr = ptr;
  b->size = size;
  b->kind = kDevice;
  b->device = current;
  b->imported = 1;
  strcpy(b->name, name);
  add_live(b);
  *p = ptr;
  pthread_mutex_unlock(&mu);
  return 0;
}
// Closing an imported mapping: its memory is the exporter's, so it is
// unmapped at once rather than poisoned.
int cudaIpcCloseMemHandle(void* p) {
  pthread_mutex_lock(&mu);
  Block* b = holding(live, p);
  if (!b || b->ptr != p || !b->imported) {
    pthread_mutex_unlock(&mu);
    return kInvalidValue;
  }
  take_live(p);
  release_memory(b);
  pthread_mutex_unlock(&mu);
  return 0;
}
int cudaGetLastError(void) { return 0; }
const char* cudaGetErrorString(int e) {
  static __thread char buf[32];
  snprintf(buf, sizeof buf, "stub error %d", e);
  return buf;
}

// What `triton-node doctor` reads: versions, and per device a name, the
// total memory (cudaDeviceProp.totalGlobalMem, at offset 288) and a
// compute capability (cudaDevAttrComputeCapabilityMajor/Minor: 75/76).
int cudaDriverGetVersion(int* v) {
  *v = 13000;
  return 0;
}
int cudaRuntimeGetVersion(int* v) {
  *v = 12080;
  return 0;
}
int cudaDeviceGetAttribute(int* value, int attribute, int device) {
  if (device < 0 || device > 1) return 101;
  if (attribute == 75) *value = 9;
  else if (attribute == 76) *value = 0;
  else return 1;
  return 0;
}
int cudaGetDeviceProperties_v2(void* props, int device) {
  if (device < 0 || device > 1) return 101;
  snprintf((char*)props, 256, "stub device %d", device);
  memcpy((char*)props + 288, &kDeviceBytes, sizeof kDeviceBytes);
  return 0;
}
