// `hlo-emit --explain-layout` on the seed's examples (seed 004, IREE's nested layout),
// digit for digit: the 64x64 layout's conceptual view, each subgroup's and thread's part
// and the per-thread shape (and the layout as an indexing map); the order of subgroup ids for subgroup_tile = [4, 2],
// subgroup_strides = [1, 4], and its fold onto 4 hardware subgroups. Then layouts the
// verifier refuses, each with a located error.
// RUN: hlo-emit --explain-layout '#iree_vector_ext.nested_layout<subgroup_tile = [2, 1], batch_tile = [2, 4], outer_tile = [1, 1], thread_tile = [16, 4], element_tile = [1, 4], subgroup_strides = [1, 0], thread_strides = [1, 16]>' --vector-shape 64x64 --subgroups 4 | FileCheck %s
// RUN: hlo-emit --explain-layout '#xla_gpu.nested_layout<subgroup_tile = [4, 2], batch_tile = [1, 1], outer_tile = [1, 1], thread_tile = [1, 1], element_tile = [1, 1], subgroup_strides = [1, 4], thread_strides = [0, 0]>' --vector-shape 4x2 --subgroups 4 | FileCheck %s --check-prefix=ORDER
// RUN: not hlo-emit --explain-layout '#xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [1], outer_tile = [1], thread_tile = [4], element_tile = [1], subgroup_strides = [0], thread_strides = [2]>' --vector-shape 4 --subgroup-size 4 2>&1 | FileCheck %s --check-prefix=PAST
// RUN: not hlo-emit --explain-layout '#xla_gpu.nested_layout<subgroup_tile = [1, 1], batch_tile = [1, 1], outer_tile = [1, 1], thread_tile = [4, 4], element_tile = [1, 1], subgroup_strides = [0, 0], thread_strides = [1, 2]>' --vector-shape 4x4 2>&1 | FileCheck %s --check-prefix=OVERLAP
// RUN: not hlo-emit --explain-layout '#xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [0], outer_tile = [1], thread_tile = [1], element_tile = [1], subgroup_strides = [0], thread_strides = [0]>' --vector-shape 1 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not hlo-emit --explain-layout '#xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [2], outer_tile = [1], thread_tile = [1], element_tile = [1], subgroup_strides = [0], thread_strides = [0]>' --vector-shape 4 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not hlo-emit --explain-layout '#xla_gpu.nested_layout<subgroup_tile = [1], batch_tile = [1], thread_tile = [1], element_tile = [1], subgroup_strides = [0], thread_strides = [0]>' --vector-shape 1 2>&1 | FileCheck %s --check-prefix=FIELD

// CHECK:      conceptual view: vector<[2x1]x[2x4]x[1x1]x[16x4]x[1x4]>
// CHECK-NEXT: per thread: vector<2x16> (conceptual view vector<[2x4]x[1x1]x[1x4]>)
// CHECK-NEXT: indexing map: (thread_id, subgroup_id)[batch0, batch1, outer0, outer1, element0, element1] -> (subgroup_id * 32 + batch0 * 16 + thread_id mod 16, (thread_id floordiv 16) * 4 + batch1 * 16 + element1), domain: thread_id in [0, 63], subgroup_id in [0, 1], batch0 in [0, 1], batch1 in [0, 3], outer0 in [0, 0], outer1 in [0, 0], element0 in [0, 0], element1 in [0, 3]
// CHECK:      subgroup0 : vector<[2x4]x[1x1]x[16x4]x[1x4]>
// CHECK-NEXT: from vector<[2x1]x[2x4]x[1x1]x[16x4]x[1x4]>[0,:,:,:,:,:,:,:,:,:]
// CHECK-NEXT: subgroup1 : vector<[2x4]x[1x1]x[16x4]x[1x4]>
// CHECK-NEXT: from vector<[2x1]x[2x4]x[1x1]x[16x4]x[1x4]>[1,:,:,:,:,:,:,:,:,:]
// CHECK-NEXT: subgroup2 : vector<[2x4]x[1x1]x[16x4]x[1x4]>
// CHECK-NEXT: from vector<[2x1]x[2x4]x[1x1]x[16x4]x[1x4]>[0,:,:,:,:,:,:,:,:,:]
// CHECK-NEXT: subgroup3 : vector<[2x4]x[1x1]x[16x4]x[1x4]>
// CHECK-NEXT: from vector<[2x1]x[2x4]x[1x1]x[16x4]x[1x4]>[1,:,:,:,:,:,:,:,:,:]
// CHECK-NEXT: thread0 : vector<[2x4]x[1x1]x[1x4]>
// CHECK-NEXT: from vector<[2x4]x[1x1]x[16x4]x[1x4]>[:,:,:,:,0,0,:,:]
// CHECK-NEXT: thread1 : vector<[2x4]x[1x1]x[1x4]>
// CHECK-NEXT: from vector<[2x4]x[1x1]x[16x4]x[1x4]>[:,:,:,:,1,0,:,:]
// CHECK:      thread16 : vector<[2x4]x[1x1]x[1x4]>
// CHECK-NEXT: from vector<[2x4]x[1x1]x[16x4]x[1x4]>[:,:,:,:,0,1,:,:]
// CHECK:      thread63 : vector<[2x4]x[1x1]x[1x4]>
// CHECK-NEXT: from vector<[2x4]x[1x1]x[16x4]x[1x4]>[:,:,:,:,15,3,:,:]
// CHECK-NOT:  thread64

// ORDER:      virtual subgroup ids: [0][0], [0][1], [1][0], [1][1], [2][0], [2][1], [3][0], [3][1]
// ORDER-NEXT: subgroup ids: 0, 4, 1, 5, 2, 6, 3, 7
// ORDER-NEXT: subgroup ids mod 4 (the hardware's subgroups): 0, 0, 1, 1, 2, 2, 3, 3

// PAST: <layout>:1:1: error: thread ids reach 6, past the subgroup size 4
// OVERLAP: <layout>:1:1: error: two threads share thread id {{[0-9]+}}: the thread strides overlap
// ZERO: <layout>:1:1: error: batch_tile has 0; its entries must be positive
// SHAPE: <layout>:1:1: error: the tiles of dimension 0 multiply to 2, but the vector has 4
// FIELD: <layout>:1:{{[0-9]+}}: error: expected 'outer_tile'
