//===- ManifestEmitter.cpp - Kernel IR to a JSON launcher manifest --------===//
//
// Part of tkc. See docs/SpecReference.md ("What --emit=manifest writes").
//
//===----------------------------------------------------------------------===//
#include "tkc/Emit/ManifestEmitter.h"

#include "tkc/dsl/InternalError.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>

namespace tkc {

namespace {

/// The manifest's layout version; bump it when a key changes meaning.
/// 2: launchers take the `scalars` between the sizes and the stream.
constexpr int64_t kManifestFormatVersion = 2;

/// A minimal streaming JSON writer: two-space indentation, one element per
/// line, keys in the order written. (llvm/Support/JSON.h does not compile
/// with clang 14 in C++20 mode: json::Array holds a vector of the incomplete
/// json::Value.)
class JsonWriter {
public:
  explicit JsonWriter(llvm::raw_ostream &os) : os(os) {}

  void value(llvm::StringRef text) {
    element();
    quote(text);
  }
  void value(int64_t number) {
    element();
    os << number;
  }
  void object(const std::function<void()> &body) { scope('{', '}', body); }
  void array(const std::function<void()> &body) { scope('[', ']', body); }

  void attribute(llvm::StringRef key, llvm::StringRef text) {
    this->key(key);
    quote(text);
  }
  void attribute(llvm::StringRef key, int64_t number) {
    this->key(key);
    os << number;
  }
  /// A finite double in the shortest form that reads back as the same
  /// double (e.g. 0.125, 0.08838834764831843, 1e-06).
  void attribute(llvm::StringRef key, double number) {
    TKC_INTERNAL_ASSERT(std::isfinite(number),
                        "JSON has no spelling for " + fmt::format("{}", number));
    this->key(key);
    os << fmt::format("{}", number);
  }
  void attributeObject(llvm::StringRef key, const std::function<void()> &body) {
    this->key(key);
    pendingKey = true;
    object(body);
  }
  void attributeArray(llvm::StringRef key, const std::function<void()> &body) {
    this->key(key);
    pendingKey = true;
    array(body);
  }

private:
  /// Starts an element of the enclosing object or array on its own line.
  void element() {
    if (pendingKey) {
      pendingKey = false;
      return;
    }
    if (depth == 0)
      return;
    os << (first ? "\n" : ",\n");
    first = false;
    os.indent(2 * depth);
  }
  void key(llvm::StringRef name) {
    element();
    quote(name);
    os << ": ";
  }
  void scope(char open, char close, const std::function<void()> &body) {
    element();
    os << open;
    ++depth;
    first = true;
    body();
    --depth;
    if (!first) {
      os << "\n";
      os.indent(2 * depth);
    }
    os << close;
    first = false;
  }
  void quote(llvm::StringRef text) {
    os << '"';
    for (unsigned char c : text) {
      if (c == '"' || c == '\\')
        os << '\\' << c;
      else if (c < 0x20)
        os << llvm::format("\\u%04x", c);
      else
        os << c;
    }
    os << '"';
  }

  llvm::raw_ostream &os;
  int depth = 0;
  bool first = true;
  bool pendingKey = false;
};

/// One launcher: a kernel's own, or the one that chooses between the kernels
/// sharing `k.entry` at each call (their arguments are the same; the emitter
/// checks), described without the parameters chosen at launch.
void writeKernel(const ir::Kernel &k, JsonWriter &j) {
  const std::string &name = k.entry ? k.entry->name : k.name;
  bool choosing = k.entry && k.entry->name != k.name;
  j.object([&] {
    j.attribute("name", name);
    j.attribute("launcher", "tkc::kernels::" + name);
    j.attributeObject("params", [&] {
      for (const auto &[param, value] : k.params)
        if (!k.entry || !llvm::is_contained(k.entry->selected, param))
          j.attribute(param, value);
    });
    if (choosing)
      j.attribute("chooses", k.entry->written);
    j.attributeArray("arguments", [&] {
      for (size_t g = 0; g < k.globals.size(); ++g) {
        const ir::Global &global = k.globals[g];
        bool output = ir::writesGlobal(k, static_cast<unsigned>(g));
        j.object([&] {
          j.attribute("name", global.name);
          j.attribute("dtype", spec::spelling(global.dtype));
          j.attribute("c_type", ir::cudaTypeName(global.dtype));
          j.attribute("rank", static_cast<int64_t>(global.dims.size()));
          // The shape of the tensor a caller passes: with a layout, its dims in memory order.
          j.attributeArray("dims", [&] {
            for (const ir::Size &d : global.storedDims()) {
              if (d.constant)
                j.value(*d.constant);
              else
                j.value(d.symbol);
            }
          });
          j.attribute("role", ir::addsIntoGlobal(k, static_cast<unsigned>(g)) ? "accumulated"
                              : output                                        ? "output"
                                                                              : "input");
        });
      }
    });
    j.attributeArray("sizes", [&] {
      for (const std::string &size : ir::launchSizeSymbols(k))
        j.value(size);
    });
    j.attributeArray("scalars", [&] {
      for (const ir::Scalar &scalar : k.scalars)
        j.object([&] {
          j.attribute("name", scalar.name);
          j.attribute("dtype", spec::spelling(scalar.dtype));
          j.attribute("c_type", ir::cudaTypeName(scalar.dtype));
          if (scalar.defaultValue)
            j.attribute("default", *scalar.defaultValue);
        });
    });
  });
}

} // namespace

void emitManifest(const std::vector<ir::Kernel> &kernels, const ManifestOptions &options,
                  llvm::raw_ostream &os) {
  JsonWriter j(os);
  j.object([&] {
    j.attribute("format", "tkc-manifest");
    j.attribute("format_version", kManifestFormatVersion);
    j.attribute("tkc_version", options.version);
    j.attribute("spec", options.specName);
    j.attribute("kernel", kernels.empty() ? "" : kernels.front().specName);
    const ArchInfo *arch = kernels.empty() ? nullptr : kernels.front().arch;
    j.attribute("arch", arch ? arch->name : "");
    j.attribute("nvcc_gencode", arch ? arch->nvccGencode : "");
    j.attributeArray("kernels", [&] {
      llvm::StringSet<> written;
      for (const ir::Kernel &k : kernels)
        if (written.insert(k.entry ? k.entry->name : k.name).second)
          writeKernel(k, j);
    });
  });
  os << "\n";
}

} // namespace tkc
