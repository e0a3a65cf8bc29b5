//===- Declarations.cpp - Globals, scalars, tiles and state ---------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// The spec's declarations in one instantiation: the arch features the
// template needs, the consumer's warpgroups, globals, scalars, shared tiles
// (staged or per warpgroup) and the consumer's state; and the lookups of the
// names they declare.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "llvm/ADT/StringSet.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>

namespace tkc::lower {

void Lowering::checkTemplateFeatures() {
  llvm::SmallVector<llvm::StringRef, 2> missing;
  if (!arch.hasTma)
    missing.push_back("TMA (the bulk tensor copy)");
  if (!arch.hasSetmaxnreg)
    missing.push_back("setmaxnreg");
  if (missing.empty())
    return;
  diags.report(DiagID::err_arch_lacks_template, spec.tmpl.loc, spec::spelling(spec.tmpl.value),
               llvm::join(missing, " and "), arch.name.str(),
               archListWith([](const ArchInfo &a) { return a.hasTma && a.hasSetmaxnreg; }));
}

bool Lowering::usableName(const std::string &name, SourceLoc loc) {
  llvm::StringRef text = name;
  // A reserved name was renamed (mangleReservedNames) where it can be; one that is not
  // renamed (a driver that does not mangle) is refused like the prefixes.
  if (isMangledName(text) ||
      (!text.startswith("tkc_") && !text.startswith("__") && !isReservedCxxName(text)))
    return true;
  diags.report(DiagID::err_sema_reserved_name, loc, name);
  return false;
}

void Lowering::checkSizeNames() {
  std::vector<std::pair<std::string, SourceLoc>> sizes;
  for (const spec::GlobalDecl &global : spec.globals)
    for (const spec::Extent &dim : global.dims)
      if (!dim.isNumber() && !intParam(dim.name))
        sizes.emplace_back(dim.name, dim.loc);
  for (const ir::IterVar &var : kernel.tasks)
    if (!var.size.constant)
      sizes.emplace_back(var.size.symbol, var.loc);
  if (!kernel.loop.size.constant)
    sizes.emplace_back(kernel.loop.size.symbol, kernel.loop.loc);
  llvm::StringSet<> reported;
  for (const auto &[name, loc] : sizes) {
    auto it = declared.find(name);
    if (it == declared.end() || !reported.insert(name).second)
      continue;
    diags.report(DiagID::err_sema_size_name, loc, name);
    diags.report(DiagID::note_declared_here, it->second, name);
  }
}

bool Lowering::declareName(const std::string &name, SourceLoc loc, const char *kind, bool inCode) {
  if (inCode && !usableName(name, loc))
    return false;
  auto [it, inserted] = declared.try_emplace(name, loc);
  if (inserted)
    return true;
  diags.report(DiagID::err_sema_duplicate_name, loc, name, kind);
  diags.report(DiagID::note_declared_here, it->second, name);
  return false;
}

bool Lowering::declareConsumerWarpgroups() {
  SourceLoc loc = spec.consumer.loc;
  int64_t count = 1;
  if (spec.consumer.warpgroups) {
    count = spec.consumer.warpgroups->value;
    loc = spec.consumer.warpgroups->loc;
  } else if (const auto &name = spec.consumer.warpgroupsName) {
    loc = name->loc;
    auto value = intParam(name->value);
    if (!value) {
      diags.report(DiagID::err_sema_value_kind, loc, "'warpgroups' of the consumer",
                   "a number, or an integer constant or parameter", "'" + name->value + "'");
      return false;
    }
    count = *value;
  }
  if (count < 1 || count > 3) {
    diags.report(DiagID::err_sema_consumer_warpgroups, loc, count);
    return false;
  }
  kernel.consumerWarpgroups = static_cast<int>(count);
  return true;
}

ir::Size Lowering::toSize(const spec::Extent &extent) const {
  if (extent.isNumber())
    return ir::Size{*extent.number, {}};
  if (auto value = intParam(extent.name))
    return ir::Size{*value, {}};
  return ir::Size{std::nullopt, extent.name};
}

spec::DType Lowering::chooseDType(spec::DType written, const Expr *choice) {
  if (!choice)
    return written;
  const Expr *chosen = chooseBranch(*choice);
  if (chosen && chosen->kind == Expr::Kind::Name)
    if (auto dtype = spec::dtypeNamed(chosen->text))
      return *dtype;
  return written; // reported (the condition), or checked by the parser (the branches)
}

bool Lowering::lowerLayout(const spec::GlobalDecl &decl, ir::Global &g) {
  auto refuse = [&](SourceLoc loc, const std::string &why) {
    diags.report(DiagID::err_sema_layout, loc, g.name, why);
    return false;
  };
  std::vector<std::string> written;
  for (const ir::Size &d : g.dims)
    written.push_back(d.str());
  const std::string dimsText = "[" + llvm::join(written, ", ") + "]";
  if (decl.layout.size() != g.dims.size())
    return refuse(decl.layoutLoc, fmt::format("lists {} dims; it must list each of its dims {} "
                                              "once, in the order memory holds them",
                                              decl.layout.size(), dimsText));
  std::vector<bool> taken(g.dims.size(), false);
  for (const spec::Extent &extent : decl.layout) {
    const ir::Size size = toSize(extent);
    std::vector<unsigned> matches;
    for (unsigned d = 0; d < g.dims.size(); ++d)
      if (g.dims[d] == size)
        matches.push_back(d);
    if (matches.empty())
      return refuse(extent.loc, fmt::format("names '{}', which is not one of its dims {}",
                                            size.str(), dimsText));
    if (matches.size() > 1)
      return refuse(extent.loc, fmt::format("cannot tell which of its dims {} '{}' is: {} of "
                                            "them are '{}'",
                                            dimsText, size.str(), matches.size(), size.str()));
    if (taken[matches[0]])
      return refuse(extent.loc, fmt::format("names '{}' twice", size.str()));
    taken[matches[0]] = true;
    g.layout.push_back(matches[0]);
  }
  if (g.layout.back() != g.dims.size() - 1)
    return refuse(decl.layout.back().loc,
                  fmt::format("must end with its last dim '{}': a tile's columns are contiguous "
                              "in memory",
                              g.dims.back().str()));
  bool identity = true;
  for (unsigned m = 0; m < g.layout.size(); ++m)
    identity = identity && g.layout[m] == m;
  if (identity)
    g.layout.clear(); // the packed order itself
  return true;
}

void Lowering::declareGlobals() {
  for (const spec::ParamDecl &param : spec.params)
    declareName(param.name.value, param.name.loc, "as a parameter", /*inCode=*/false);
  for (const spec::GlobalDecl &global : spec.globals) {
    auto active = holds(global.when.get(), "the 'when' of global '" + global.name.value + "'");
    if (!active || !*active)
      continue;
    if (!declareName(global.name.value, global.name.loc, "as a global"))
      continue;
    ir::Global g{global.name.value,
                 chooseDType(global.dtype.value, global.dtypeChoice.get()),
                 {},
                 global.name.loc};
    for (const spec::Extent &dim : global.dims) {
      g.dims.push_back(toSize(dim));
      if (!g.dims.back().constant && !usableName(g.dims.back().symbol, dim.loc))
        g.dims.back() = ir::Size{1, {}}; // reported; a stand-in keeps the rest checkable
    }
    if (g.dims.size() > 4) {
      diags.report(DiagID::err_sema_unsupported, global.name.loc,
                   fmt::format("a global of {} dimensions", g.dims.size()),
                   "TMA tile maps here have at most 4");
      continue;
    }
    if (!global.layout.empty() && !lowerLayout(global, g))
      continue;
    globalIndex[global.name.value] = static_cast<unsigned>(kernel.globals.size());
    kernel.globals.push_back(std::move(g));
  }
}

void Lowering::declareScalars() {
  for (const spec::ScalarDecl &decl : spec.scalars) {
    if (!declareName(decl.name.value, decl.name.loc, "as a scalar"))
      continue;
    if (decl.dtype.value != spec::DType::F32) {
      diags.report(DiagID::err_sema_dtype, decl.dtype.loc, "scalar '" + decl.name.value + "'",
                   "f32", spelling(decl.dtype.value));
      continue;
    }
    ir::Scalar scalar{decl.name.value, decl.dtype.value, std::nullopt, decl.name.loc};
    if (decl.defaultValue) {
      auto value = foldConstant(*decl.defaultValue);
      if (!value || !std::isfinite(*value)) {
        diags.report(DiagID::err_sema_value_kind, decl.defaultValue->loc,
                     "the default of scalar '" + decl.name.value + "'",
                     "a finite number computed from numbers and parameters", "another expression");
        continue;
      }
      scalar.defaultValue = *value;
    }
    if (decl.check) {
      if (!lowerScalarCheck(*decl.check, decl.name.value, scalar.checks))
        continue;
      for (const ir::Scalar::Check &check : scalar.checks)
        if (scalar.defaultValue && !check.accepts(*scalar.defaultValue)) {
          diags.report(DiagID::err_sema_scalar_default_check, decl.defaultValue->loc,
                       decl.name.value, fmt::format("{}", *scalar.defaultValue),
                       check.str(decl.name.value));
          break;
        }
    }
    scalarIndex[decl.name.value] = static_cast<unsigned>(kernel.scalars.size());
    kernel.scalars.push_back(std::move(scalar));
  }
}

void Lowering::declareTiles() {
  const spec::TileDecl *firstStaged = nullptr;
  for (const spec::TileDecl &tile : spec.tiles) {
    auto active = holds(tile.when.get(), "the 'when' of tile '" + tile.name.value + "'");
    if (!active || !*active)
      continue;
    if (tile.space.value != spec::MemSpace::Shared) {
      diags.report(DiagID::err_sema_unsupported, tile.space.loc, "a register tile",
                   "declare consumer registers under 'state'");
      continue;
    }
    if (tile.count) {
      diags.report(DiagID::err_sema_unsupported, tile.count->loc, "'count' on a tile",
                   "declare each tile by name, or list names with 'of'");
      continue;
    }
    if (tile.per && tile.per->value != "consumer_warpgroup") {
      diags.report(DiagID::err_sema_value_kind, tile.per->loc,
                   "'per' of tile '" + tile.name.value + "'", "'consumer_warpgroup'",
                   "'" + tile.per->value + "'");
      continue;
    }
    if (tile.shape.size() != 2) {
      diags.report(DiagID::err_sema_tile_dims, tile.name.loc, tile.name.value, tile.shape.size());
      continue;
    }
    const spec::DType dtype = chooseDType(tile.dtype.value, tile.dtypeChoice.get());
    if (dtype == spec::DType::I32) {
      diags.report(DiagID::err_sema_dtype, tile.dtype.loc, "tile '" + tile.name.value + "'",
                   "bf16, f16 or f32", "i32");
      continue;
    }
    int64_t extents[2] = {0, 0};
    bool constant = true;
    for (int d = 0; d < 2; ++d) {
      ir::Size size = toSize(tile.shape[d]);
      if (!size.constant) {
        diags.report(DiagID::err_sema_unsupported, tile.shape[d].loc,
                     "a tile extent given by a size ('" + tile.shape[d].name + "')",
                     "write a number or an integer parameter");
        constant = false;
      } else {
        extents[d] = *size.constant;
      }
    }
    if (!constant)
      continue;
    // TMA boxes and wgmma descriptors are built for 128-byte swizzled rows.
    if (extents[1] % 64 != 0) {
      diags.report(DiagID::err_sema_tile_width, tile.shape[1].loc, tile.name.value, extents[1]);
      continue;
    }
    // `of: [k, v]` declares one tile of this shape per name.
    std::vector<spec::Located<std::string>> names;
    if (tile.of.empty())
      names.push_back(tile.name);
    else
      names.assign(tile.of.begin(), tile.of.end());
    if (tile.per) {
      if (tile.stages) {
        diags.report(DiagID::err_sema_value_kind, tile.stages->loc,
                     "tile '" + tile.name.value + "'", "staged or per warpgroup",
                     "both 'stages' and 'per'");
        continue;
      }
      for (const spec::Located<std::string> &name : names) {
        if (!declareName(name.value, name.loc, "as a tile"))
          continue;
        warpgroupTileIndex[name.value] = static_cast<unsigned>(kernel.warpgroupTiles.size());
        kernel.warpgroupTiles.push_back(
            ir::WarpgroupTile{name.value, dtype, extents[0], extents[1], name.loc});
      }
      continue;
    }
    if (tile.stages) {
      if (firstStaged && firstStaged->stages &&
          (firstStaged->stages->isAuto != tile.stages->isAuto ||
           firstStaged->stages->count != tile.stages->count)) {
        auto show = [](const spec::StageCount &s) {
          return s.isAuto ? std::string("auto") : std::to_string(s.count);
        };
        diags.report(DiagID::err_sema_stage_count, tile.stages->loc, firstStaged->name.value,
                     show(*firstStaged->stages), tile.name.value, show(*tile.stages));
      } else if (!firstStaged) {
        firstStaged = &tile;
        kernel.requestedStages = *tile.stages;
      }
    }
    for (const spec::Located<std::string> &name : names) {
      if (!declareName(name.value, name.loc, "as a tile"))
        continue;
      tileIndex[name.value] = static_cast<unsigned>(kernel.stageTiles.size());
      kernel.stageTiles.push_back(
          ir::StageTile{name.value, dtype, extents[0], extents[1], name.loc});
    }
  }
}

void Lowering::declareState() {
  for (const spec::StateDecl &state : spec.consumer.state) {
    if (!declareName(state.name.value, state.name.loc, "as consumer state"))
      continue;
    // "f32[128, 256]" (a tile) or "f32[192]" (one value per row)
    llvm::StringRef type = llvm::StringRef(state.type.value).trim();
    auto bad = [&] {
      diags.report(DiagID::err_sema_state_type, state.type.loc, state.name.value, state.type.value);
    };
    auto [dtypeText, rest] = type.split('[');
    dtypeText = dtypeText.trim();
    if (!rest.consume_back("]")) {
      bad();
      continue;
    }
    llvm::SmallVector<llvm::StringRef, 4> dims;
    rest.split(dims, ',');
    llvm::SmallVector<int64_t, 2> extents;
    for (llvm::StringRef dim : dims) {
      dim = dim.trim();
      int64_t value = 0;
      if (!dim.getAsInteger(10, value) && value > 0)
        extents.push_back(value);
      else if (auto param = intParam(dim); param && *param > 0)
        extents.push_back(*param);
    }
    if (extents.size() != dims.size() || extents.empty() || extents.size() > 2) {
      bad();
      continue;
    }
    std::optional<spec::DType> dtype = spec::dtypeNamed(dtypeText);
    if (!dtype) {
      bad();
      continue;
    }
    if (*dtype != spec::DType::F32) {
      diags.report(DiagID::err_sema_dtype, state.type.loc,
                   "the accumulator '" + state.name.value + "'", "f32", spelling(*dtype));
      continue;
    }
    int64_t rows = extents[0];
    int64_t wantRows = rowsOfBlock();
    if (rows != wantRows) {
      diags.report(DiagID::err_sema_state_rows, state.type.loc, state.name.value, rows,
                   kernel.consumerWarpgroups, wantRows);
      continue;
    }
    stateDecls.push_back(
        StateDecl{state.name.value, rows, extents.size() == 1 ? 1 : extents[1], state.name.loc});
  }
}

std::vector<llvm::StringRef> Lowering::declaredNames() const {
  std::vector<llvm::StringRef> names;
  for (const auto &entry : declared)
    names.push_back(entry.getKey());
  llvm::sort(names);
  return names;
}

bool Lowering::known(const Expr &name, const std::string &what) {
  if (declared.count(name.text))
    return true;
  reportUnknownName(name, what, declaredNames());
  return false;
}

const ir::IterVar *Lowering::findTask(llvm::StringRef name) const {
  for (const ir::IterVar &var : kernel.tasks)
    if (var.name == name)
      return &var;
  return nullptr;
}

const ir::IterVar *Lowering::findIterVar(llvm::StringRef name) const {
  if (const ir::IterVar *task = findTask(name))
    return task;
  if (kernel.loop.name == name)
    return &kernel.loop;
  return nullptr;
}

} // namespace tkc::lower
