// The string hashes TensorFlow's hashing ops use, bit for bit: Fingerprint64 (FarmHash's
// farmhashna::Hash64, behind StringToHashBucketFast and Fingerprint), SipHash-2-4 with a 128-bit
// key (behind StringToHashBucketStrong) and TF's legacy Hash64 (MurmurHash64A with seed
// 0xDECAFCAFFE, behind StringToHashBucket). Both are fixed by the model formats: a model trained
// with TensorFlow looks its buckets up by these exact values.
#pragma once

#include <cstdint>
#include <string_view>

namespace kiln::exec {

// FarmHash Fingerprint64 (farmhashna::Hash64) of the bytes of `s`.
uint64_t Fingerprint64(std::string_view s);

// SipHash-2-4 of the bytes of `s` under the key (k0, k1).
uint64_t SipHash24(uint64_t k0, uint64_t k1, std::string_view s);

// TensorFlow's Hash64 (tensorflow/core/platform/hash.h) of the bytes of `s`.
uint64_t LegacyHash64(std::string_view s);

}  // namespace kiln::exec
