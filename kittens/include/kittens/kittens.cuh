/**
 * @file
 * @brief Master header: the whole kittens tile library for Hopper (sm_90a).
 *
 * Layout by memory level: common/ (config, dtypes, helpers, swizzle maths),
 * types/{register,shared,global}/ (tiles, vectors, layouts, TMA maps), ops/ (sync,
 * global, shared, register, mma), lcf/ (the producer/consumer kernel template).
 */
#pragma once

#include "common/config.cuh"
#include "common/base_types.cuh"
#include "common/util.cuh"
#include "common/swizzle.cuh"
#include "common/fast_div.cuh"

#include "types/register/fragment_layout.cuh"
#include "types/register/rv.cuh"
#include "types/register/rt.cuh"
#include "types/shared/st.cuh"
#include "types/shared/sv.cuh"
#include "types/shared/allocator.cuh"
#include "types/shared/wgmma_descriptor.cuh"
#include "types/global/coord.cuh"
#include "types/global/gl.cuh"
#include "types/global/tma_check.cuh"
#include "types/global/tma_map.cuh"

#include "ops/sync/mbarrier_sm90.cuh"
#include "ops/sync/named_barrier.cuh"
#include "ops/sync/setmaxnreg_sm90.cuh"
#include "ops/global/tma_sm90.cuh"
#include "ops/global/global_shared.cuh"
#include "ops/global/register_global.cuh"
#include "ops/shared/shared_register.cuh"
#include "ops/shared/shared_vector.cuh"
#include "ops/register/maps.cuh"
#include "ops/register/reductions.cuh"
#include "ops/register/conversions.cuh"
#include "ops/register/masks.cuh"
#include "ops/register/elementwise.cuh"
#include "ops/mma/mma_sync_sm80.cuh"
#include "ops/mma/wgmma_sm90.cuh"

#include "lcf/tile_order.cuh"
#include "lcf/sequences.cuh"
#include "lcf/lcf_sm90.cuh"
