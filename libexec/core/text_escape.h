// C-style escaping of string elements as TensorFlow prints them (absl::Utf8SafeCEscape), shared
// by Tensor::SummarizeValue and the Assert kernel's message.
#pragma once

#include <string>

namespace kiln {

// Named escapes (\n \r \t \" \' \\), octal (\ooo) for other ASCII controls and DEL; bytes >= 0x80
// are kept, so UTF-8 text stays readable.
std::string CEscape(const std::string& s);

}  // namespace kiln
