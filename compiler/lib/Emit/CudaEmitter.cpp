//===- CudaEmitter.cpp - Kernel IR to CUDA C++ on kittens ------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// The files of one spec: a header declaring every launcher, and a .cu with the
// banner, the includes its kernels use, the boilerplate templates, each
// kernel's struct (KernelPrinter) and the launchers. The printing of one kernel
// lives in KernelPrinter and its units; this file only assembles.
//
//===----------------------------------------------------------------------===//
#include "tkc/Emit/CudaEmitter.h"

#include "KernelPrinter.h"

#include "tkc/Emit/CudaWriter.h"
#include "tkc/Emit/Template.h"
#include "tkc/Emit/Templates/gelu.h"
#include "tkc/Emit/Templates/header.h"
#include "tkc/Emit/Templates/launch.h"
#include "tkc/dsl/InternalError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <memory>

namespace tkc {

namespace {
using emit::KernelPrinter;

bool usesGelu(const ir::Kernel &kernel) {
  bool uses = false;
  ir::forEachOp(kernel.program, [&](ir::Body, const ir::ProgramOp &op) {
    uses = uses || ir::anyOf(op.expr,
                             [](const ir::Elementwise &e) { return e.isUnary(ir::UnaryOp::Gelu); });
  });
  if (kernel.loopTail && kernel.loopTail->kernel)
    uses = uses || usesGelu(*kernel.loopTail->kernel);
  return uses;
}
} // namespace

void emitCuda(const std::vector<ir::Kernel> &kernels, const EmitOptions &options,
              EmittedFiles &out) {
  TKC_INTERNAL_ASSERT(!kernels.empty(), "emitCuda needs at least one kernel");
  std::string banner = expandTemplate(templates::kHeader,
                                      {{"version", options.version}, {"spec", options.specName}});

  // The header: launcher declarations only.
  std::string header;
  llvm::raw_string_ostream headerStream(header);
  CudaWriter h(headerStream);
  std::string source;
  llvm::raw_string_ostream sourceStream(source);
  CudaWriter s(sourceStream);

  const bool usesFp8 = llvm::any_of(kernels, [](const ir::Kernel &kernel) {
    return llvm::any_of(kernel.globals, [](const ir::Global &g) {
      return g.dtype == spec::DType::F8E4M3 || g.dtype == spec::DType::F8E5M2;
    });
  });
  std::vector<std::unique_ptr<KernelPrinter>> emitters;
  for (const ir::Kernel &kernel : kernels)
    emitters.push_back(std::make_unique<KernelPrinter>(kernel, s));

  h.raw(banner);
  h.line("#pragma once");
  h.blank();
  h.line("#include <cuda_bf16.h>");
  if (usesFp8)
    h.line("#include <cuda_fp8.h>");
  h.line("#include <cuda_runtime.h>");
  h.line("#include <tkc/runtime/Check.h>");
  h.blank();
  {
    auto ns = h.scope("namespace tkc::kernels", "", "namespace tkc::kernels");
    llvm::StringSet<> declared;
    for (size_t i = 0; i < kernels.size(); ++i) {
      KernelPrinter declarations(kernels[i], h);
      if (!declared.insert(declarations.publicName()).second)
        continue;
      h.blank();
      declarations.printLauncherDeclaration();
    }
  }

  s.raw(banner);
  if (!options.headerName.empty()) {
    s.linef("#include \"{}\"", options.headerName);
    s.blank();
  } else {
    s.line("#include <cuda_bf16.h>");
    if (usesFp8)
      s.line("#include <cuda_fp8.h>");
    s.line("#include <cuda_runtime.h>");
    s.line("#include <tkc/runtime/Check.h>");
  }
  if (llvm::any_of(kernels, [](const ir::Kernel &kernel) { return kernel.loopTail.has_value(); }))
    s.line("#include <tkc/runtime/Tiles.h>");
  s.line("#include <kittens/kittens.cuh>");
  s.line("#include <kittens/ops/global/epilogue_global.cuh>");
  s.blank();
  s.line("#include <string>");
  s.blank();
  {
    auto anon = s.scope("namespace", "", "namespace");
    if (llvm::any_of(kernels, usesGelu)) {
      s.raw(templates::kGelu);
      s.blank();
    }
    s.raw(templates::kLaunch);
    for (auto &emitter : emitters) {
      s.blank();
      emitter->printStruct();
      s.blank();
      emitter->printStaticAsserts();
      emitter->printWholeTiles();
    }
  }
  s.blank();
  {
    auto ns = s.scope("namespace tkc::kernels", "", "namespace tkc::kernels");
    // Launchers of kernels chosen at launch are internal: only the launcher
    // that chooses between them is declared.
    if (llvm::any_of(emitters, [](const auto &e) { return e->isChosen(); })) {
      s.blank();
      auto internal = s.scope("namespace", "", "namespace");
      for (auto &emitter : emitters)
        if (emitter->isChosen()) {
          s.blank();
          emitter->printLauncher();
        }
    }
    llvm::StringSet<> emitted;
    for (auto &emitter : emitters) {
      if (!emitted.insert(emitter->publicName()).second)
        continue;
      s.blank();
      if (!emitter->isChosen()) {
        emitter->printLauncher();
        continue;
      }
      llvm::SmallVector<const KernelPrinter *, 4> members;
      for (auto &other : emitters)
        if (other->publicName() == emitter->publicName())
          members.push_back(other.get());
      // Tried in order, the last unconditionally: the kernels chosen where
      // more conditions hold (rather than fail) read first.
      auto falseChoices = [](const KernelPrinter *e) {
        const ir::Kernel &k = e->kernel();
        return llvm::count_if(k.params, [&](const auto &param) {
          return param.second == "false" && llvm::is_contained(k.entry->choices, param.first);
        });
      };
      llvm::stable_sort(members, [&](const KernelPrinter *a, const KernelPrinter *b) {
        return falseChoices(a) < falseChoices(b);
      });
      emitter->printChoosingLauncher(members);
    }
  }
  headerStream.flush();
  sourceStream.flush();
  out.header = std::move(header);
  out.source = std::move(source);
}

} // namespace tkc
