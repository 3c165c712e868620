// A stand-in for libcudart for dry runs of the GPU test project on a machine
// without a GPU. NOT evidence that anything works on a GPU: "device" memory is
// host memory (POSIX shared memory, so CUDA IPC handles open across
// processes), copies are memmove, there are two fake devices.
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

typedef struct {
  unsigned char bytes[64];
} Handle;
typedef struct Block {
  void* ptr;
  size_t size;
  int device;
  char name[48];
  int imported;
  struct Block* next;
} Block;
static Block* blocks;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static __thread int current = 0;
static int counter;

static Block* find(void* p) {
  for (Block* b = blocks; b; b = b->next)
    if (b->ptr == p) return b;
  return NULL;
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
  Block* b = calloc(1, sizeof(Block));
  snprintf(b->name, sizeof b->name, "/stubcuda-%d-%d", (int)getpid(),
           counter++);
  int fd = shm_open(b->name, O_CREAT | O_RDWR, 0600);
  if (fd < 0 || ftruncate(fd, n ? n : 1) != 0) {
    pthread_mutex_unlock(&mu);
    return 2;
  }
  b->ptr = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  b->size = n;
  b->device = current;
  b->next = blocks;
  blocks = b;
  *p = b->ptr;
  pthread_mutex_unlock(&mu);
  return 0;
}
int cudaFree(void* p) {
  pthread_mutex_lock(&mu);
  Block** pp = &blocks;
  while (*pp && (*pp)->ptr != p) pp = &(*pp)->next;
  if (!*pp) {
    pthread_mutex_unlock(&mu);
    return 1;
  }
  Block* b = *pp;
  *pp = b->next;
  munmap(b->ptr, b->size ? b->size : 1);
  if (!b->imported) shm_unlink(b->name);
  free(b);
  pthread_mutex_unlock(&mu);
  return 0;
}
int cudaHostAlloc(void** p, size_t n, unsigned int f) {
  (void)f;
  *p = malloc(n ? n : 1);
  return *p ? 0 : 2;
}
int cudaFreeHost(void* p) {
  free(p);
  return 0;
}
int cudaMemcpy(void* d, const void* s, size_t n, int k) {
  (void)k;
  memmove(d, s, n);
  return 0;
}
int cudaIpcGetMemHandle(Handle* h, void* p) {
  pthread_mutex_lock(&mu);
  Block* b = find(p);
  if (!b || b->imported) {
    pthread_mutex_unlock(&mu);
    return 1;
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
  b->device = current;
  b->imported = 1;
  strcpy(b->name, name);
  b->next = blocks;
  blocks = b;
  *p = ptr;
  pthread_mutex_unlock(&mu);
  return 0;
}
int cudaIpcCloseMemHandle(void* p) { return cudaFree(p); }
const char* cudaGetErrorString(int e) {
  static char buf[32];
  snprintf(buf, sizeof buf, "stub error %d", e);
  return buf;
}
