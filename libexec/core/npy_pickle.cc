#include "core/npy_pickle.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/core/allocator.h"

namespace kiln::internal {
namespace {

struct Value {
  enum class Kind : uint8_t {
    kNone,
    kBool,
    kInt,
    kFloat,
    kBytes,
    kStr,
    kTuple,
    kList,
    kDict,
    kGlobal,
    kObject
  };
  Kind kind = Kind::kNone;
  int64_t i = 0;           // int, bool
  std::string s;           // bytes, str; a global's "module name"
  std::vector<int> items;  // tuple, list, dict (key, value, ...); an object's callable and args
  int state = -1;          // an object's BUILD state
};

const char* KindName(Value::Kind k) {
  static constexpr const char* kNames[] = {"None",  "bool", "int",  "float",  "bytes", "str",
                                           "tuple", "list", "dict", "global", "object"};
  return kNames[static_cast<int>(k)];
}

class Unpickler {
 public:
  Unpickler(std::string_view in, std::string_view name) : in_(in), name_(name) {}

  // The index of the pickled value.
  Result<int> Run() {
    while (pos_ < in_.size()) {
      const size_t at = pos_;
      const auto op = static_cast<unsigned char>(in_[pos_++]);
      if (op == '.') {  // STOP
        if (stack_.empty()) return Error(at, "STOP with an empty stack");
        return stack_.back();
      }
      KILN_RETURN_IF_ERROR(Step(op, at));
    }
    return Error(pos_, "the pickle ends without STOP");
  }

  const Value& at(int index) const { return values_[static_cast<size_t>(index)]; }

 private:
  Status Error(size_t at, std::string_view what) const {
    return DataLoss(name_, ": the pickled object array at byte ", at, " of its data: ", what);
  }

  Result<uint64_t> Le(size_t bytes) {
    if (in_.size() - pos_ < bytes) return Error(pos_, "truncated");
    uint64_t v = 0;
    for (size_t b = 0; b < bytes; ++b)
      v |= uint64_t{static_cast<unsigned char>(in_[pos_ + b])} << (8 * b);
    pos_ += bytes;
    return v;
  }

  Result<std::string_view> Take(uint64_t bytes) {
    if (in_.size() - pos_ < bytes) return Error(pos_, "a string runs past the end");
    std::string_view s = in_.substr(pos_, static_cast<size_t>(bytes));
    pos_ += static_cast<size_t>(bytes);
    return s;
  }

  Result<std::string_view> Line() {
    const size_t end = in_.find('\n', pos_);
    if (end == std::string_view::npos) return Error(pos_, "GLOBAL without its newline");
    std::string_view s = in_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }

  int Push(Value v) {
    values_.push_back(std::move(v));
    stack_.push_back(static_cast<int>(values_.size()) - 1);
    return stack_.back();
  }

  Result<int> Pop(size_t at) {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back()))
      return Error(at, "an opcode pops an empty stack");
    const int v = stack_.back();
    stack_.pop_back();
    return v;
  }

  // The values above the last MARK, removed with it.
  Result<std::vector<int>> PopMark(size_t at) {
    if (marks_.empty()) return Error(at, "no MARK to pop to");
    const size_t from = marks_.back();
    marks_.pop_back();
    std::vector<int> items(stack_.begin() + static_cast<std::ptrdiff_t>(from), stack_.end());
    stack_.resize(from);
    return items;
  }

  Status Memo(uint64_t key, size_t at) {
    if (stack_.empty()) return Error(at, "a memo put with an empty stack");
    memo_[key] = stack_.back();
    return OkStatus();
  }

  Status Recall(uint64_t key, size_t at) {
    auto it = memo_.find(key);
    if (it == memo_.end()) return Error(at, "a memo get of an entry never put");
    stack_.push_back(it->second);
    return OkStatus();
  }

  Result<Value*> Top(size_t at, Value::Kind kind) {
    if (stack_.empty()) return Error(at, "an opcode needs a value on the stack");
    Value& v = values_[static_cast<size_t>(stack_.back())];
    if (v.kind != kind)
      return Error(at, std::string("expected a ") + KindName(kind) + ", found " + KindName(v.kind));
    return &v;
  }

  Status Step(unsigned char op, size_t at) {
    using K = Value::Kind;
    auto text = [&](K kind, std::string_view s) {
      Value v;
      v.kind = kind;
      v.s.assign(s);
      Push(std::move(v));
      return OkStatus();
    };
    auto integer = [&](int64_t i, K kind = K::kInt) {
      Value v;
      v.kind = kind;
      v.i = i;
      Push(std::move(v));
      return OkStatus();
    };
    auto tuple = [&](std::vector<int> items) {
      Value v;
      v.kind = K::kTuple;
      v.items = std::move(items);
      Push(std::move(v));
      return OkStatus();
    };
    switch (op) {
      case 0x80: {  // PROTO
        KILN_ASSIGN_OR_RETURN(uint64_t version, Le(1));
        if (version > 5) return Error(at, "pickle protocol " + std::to_string(version));
        return OkStatus();
      }
      case 0x95:  // FRAME: a length hint
        return Le(8).status();
      case '(':
        marks_.push_back(stack_.size());
        return OkStatus();
      case 'N':
        return integer(0, K::kNone);
      case 0x88:
        return integer(1, K::kBool);
      case 0x89:
        return integer(0, K::kBool);
      case 'J': {
        KILN_ASSIGN_OR_RETURN(uint64_t v, Le(4));
        return integer(static_cast<int32_t>(static_cast<uint32_t>(v)));
      }
      case 'K': {
        KILN_ASSIGN_OR_RETURN(uint64_t v, Le(1));
        return integer(static_cast<int64_t>(v));
      }
      case 'M': {
        KILN_ASSIGN_OR_RETURN(uint64_t v, Le(2));
        return integer(static_cast<int64_t>(v));
      }
      case 0x8a: {  // LONG1: a little-endian two's complement of n bytes
        KILN_ASSIGN_OR_RETURN(uint64_t n, Le(1));
        if (n > 8) return Error(at, "an integer of more than 64 bits");
        KILN_ASSIGN_OR_RETURN(uint64_t v, Le(static_cast<size_t>(n)));
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) != 0) v |= ~uint64_t{0} << (8 * n);  // sign
        return integer(static_cast<int64_t>(v));
      }
      case 'G': {  // BINFLOAT, big-endian: kept as a float nobody reads
        KILN_RETURN_IF_ERROR(Take(8).status());
        return integer(0, K::kFloat);
      }
      // Strings: a length of 1, 4 or 8 bytes, then the bytes (UTF-8 for str).
      case 'C':     // SHORT_BINBYTES
      case 'U':     // SHORT_BINSTRING (Python 2 str: bytes)
      case 0x8c:    // SHORT_BINUNICODE
      case 'B':     // BINBYTES
      case 'T':     // BINSTRING
      case 'X':     // BINUNICODE
      case 0x8e:    // BINBYTES8
      case 0x8d: {  // BINUNICODE8
        const size_t width = op == 'C' || op == 'U' || op == 0x8c ? 1
                             : op == 0x8e || op == 0x8d           ? 8
                                                                  : 4;
        KILN_ASSIGN_OR_RETURN(uint64_t n, Le(width));
        KILN_ASSIGN_OR_RETURN(std::string_view s, Take(n));
        return text(op == 0x8c || op == 'X' || op == 0x8d ? K::kStr : K::kBytes, s);
      }
      case ')':
        return tuple({});
      case 't': {
        KILN_ASSIGN_OR_RETURN(std::vector<int> items, PopMark(at));
        return tuple(std::move(items));
      }
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        std::vector<int> items(static_cast<size_t>(op - 0x84));
        for (size_t k = items.size(); k-- > 0;) {
          KILN_ASSIGN_OR_RETURN(items[k], Pop(at));
        }
        return tuple(std::move(items));
      }
      case ']':
      case '}':
        return integer(0, op == ']' ? K::kList : K::kDict);
      case 'a':
      case 's':
      case 'e':
      case 'u': {  // APPEND, SETITEM, APPENDS, SETITEMS
        std::vector<int> items;
        if (op == 'e' || op == 'u') {
          KILN_ASSIGN_OR_RETURN(items, PopMark(at));
        } else {
          items.resize(op == 'a' ? 1 : 2);
          for (size_t k = items.size(); k-- > 0;) {
            KILN_ASSIGN_OR_RETURN(items[k], Pop(at));
          }
        }
        const bool list = op == 'a' || op == 'e';
        if (!list && items.size() % 2 != 0) return Error(at, "SETITEMS of an odd count");
        KILN_ASSIGN_OR_RETURN(Value * target, Top(at, list ? K::kList : K::kDict));
        target->items.insert(target->items.end(), items.begin(), items.end());
        return OkStatus();
      }
      case 'c': {  // GLOBAL "module\nname\n"
        KILN_ASSIGN_OR_RETURN(std::string_view module, Line());
        KILN_ASSIGN_OR_RETURN(std::string_view name, Line());
        return text(K::kGlobal, std::string(module) + " " + std::string(name));
      }
      case 0x93: {  // STACK_GLOBAL
        KILN_ASSIGN_OR_RETURN(int name, Pop(at));
        KILN_ASSIGN_OR_RETURN(int module, Pop(at));
        if (this->at(module).kind != K::kStr || this->at(name).kind != K::kStr)
          return Error(at, "STACK_GLOBAL of values that are not str");
        return text(K::kGlobal, this->at(module).s + " " + this->at(name).s);
      }
      case 'R':
      case 0x81: {  // REDUCE, NEWOBJ: recorded, never called
        KILN_ASSIGN_OR_RETURN(int args, Pop(at));
        KILN_ASSIGN_OR_RETURN(int callable, Pop(at));
        Value v;
        v.kind = K::kObject;
        v.items = {callable, args};
        Push(std::move(v));
        return OkStatus();
      }
      case 'b': {  // BUILD
        KILN_ASSIGN_OR_RETURN(int state, Pop(at));
        KILN_ASSIGN_OR_RETURN(Value * object, Top(at, K::kObject));
        object->state = state;
        return OkStatus();
      }
      case 'q':    // BINPUT
      case 'r': {  // LONG_BINPUT
        KILN_ASSIGN_OR_RETURN(uint64_t key, Le(op == 'q' ? 1 : 4));
        return Memo(key, at);
      }
      case 0x94:  // MEMOIZE
        return Memo(memo_.size(), at);
      case 'h':    // BINGET
      case 'j': {  // LONG_BINGET
        KILN_ASSIGN_OR_RETURN(uint64_t key, Le(op == 'h' ? 1 : 4));
        return Recall(key, at);
      }
      default: {
        char hex[8];
        std::snprintf(hex, sizeof(hex), "0x%02x", op);
        return Error(at, std::string("opcode ") + hex + " is not one a numpy object array uses");
      }
    }
  }

  std::string_view in_;
  std::string_view name_;
  size_t pos_ = 0;
  std::vector<Value> values_;
  std::vector<int> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, int> memo_;
};

// Protocol 2 has no bytes opcode: it pickles b'..' as _codecs.encode('..', 'latin1') (the
// bytes as code points, in UTF-8) and b'' as bytes(). Those two calls are read, not made.
bool Protocol2Bytes(const Unpickler& u, const Value& v, std::string* out) {
  using K = Value::Kind;
  if (v.kind != K::kObject || u.at(v.items[0]).kind != K::kGlobal) return false;
  const std::string& callable = u.at(v.items[0]).s;
  const Value& args = u.at(v.items[1]);
  if (args.kind != K::kTuple) return false;
  if (callable == "__builtin__ bytes" || callable == "builtins bytes") {
    out->clear();
    return args.items.empty();
  }
  if (callable != "_codecs encode" || args.items.size() != 2 ||
      u.at(args.items[0]).kind != K::kStr || u.at(args.items[1]).kind != K::kStr ||
      u.at(args.items[1]).s != "latin1")
    return false;
  const std::string& text = u.at(args.items[0]).s;
  out->clear();
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      out->push_back(static_cast<char>(c));
    } else if ((c & 0xFE) == 0xC2 && i + 1 < text.size()) {  // U+0080..U+00FF
      out->push_back(static_cast<char>(((c & 0x03) << 6) | (text[++i] & 0x3F)));
    } else {
      return false;  // not a latin-1 code point
    }
  }
  return true;
}

}  // namespace

Result<Tensor> DecodeNpyObjects(std::string_view pickle, const Shape& shape,
                                std::string_view name) {
  using K = Value::Kind;
  Unpickler u(pickle, name);
  KILN_ASSIGN_OR_RETURN(const int top, u.Run());
  auto refuse = [&](std::string_view what) {
    return Unimplemented(name, ": .npy holds pickled Python objects, and ", what,
                         "; only an object array of bytes or str is read (or save strings as a "
                         "fixed-width array: numpy.array(values, dtype='S'))");
  };
  // numpy's ndarray.__reduce__: _reconstruct(ndarray, (0,), b'b'), then BUILD with
  // (version, shape, dtype, is_fortran, elements).
  const Value& array = u.at(top);
  const bool reconstruct = array.kind == K::kObject && u.at(array.items[0]).kind == K::kGlobal &&
                           (u.at(array.items[0]).s == "numpy.core.multiarray _reconstruct" ||
                            u.at(array.items[0]).s == "numpy._core.multiarray _reconstruct");
  if (!reconstruct || array.state < 0) return refuse("they are not a numpy array");
  const Value& state = u.at(array.state);
  if (state.kind != K::kTuple || state.items.size() < 4)
    return refuse("the array's state is not (version, shape, dtype, fortran, data)");
  const size_t first = state.items.size() - 4;  // the version is left out by old numpy
  const Value& dims = u.at(state.items[first]);
  const Value& fortran = u.at(state.items[first + 2]);
  const Value& data = u.at(state.items[first + 3]);
  if (dims.kind != K::kTuple || data.kind != K::kList)
    return refuse("the array's state holds no shape and element list");
  bool same_shape = dims.items.size() == static_cast<size_t>(shape.rank());
  for (size_t d = 0; same_shape && d < dims.items.size(); ++d)
    same_shape = u.at(dims.items[d]).kind == K::kInt &&
                 u.at(dims.items[d]).i == shape.dim(static_cast<int>(d));
  if (!same_shape || data.items.size() != static_cast<size_t>(shape.num_elements()))
    return DataLoss(name, ": the pickled array's shape or element count is not the header's ",
                    shape.ToString());
  if (fortran.kind == K::kBool && fortran.i != 0 && shape.rank() > 1)
    return refuse("the array is in Fortran order (numpy.ascontiguousarray makes it C order)");
  KILN_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(CpuAllocator(), DType::kString, shape));
  std::string* out = t.data<std::string>();
  for (size_t i = 0; i < data.items.size(); ++i) {
    const Value& e = u.at(data.items[i]);
    if (e.kind == K::kBytes || e.kind == K::kStr) {
      out[i] = e.s;  // str as its UTF-8 bytes, as TensorFlow converts it
    } else if (!Protocol2Bytes(u, e, &out[i])) {
      return refuse(std::string("element ") + std::to_string(i) + " is not bytes or str but " +
                    KindName(e.kind));
    }
  }
  return t;
}

}  // namespace kiln::internal
