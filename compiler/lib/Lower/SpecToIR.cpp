//===- SpecToIR.cpp - Spec AST to kernel IR --------------------------------===//
//
// Part of tkc. See docs/Architecture.md.
//
//===----------------------------------------------------------------------===//
//
// The entry points of the lowering: the instantiations of a spec, each with
// its name, and one instantiation lowered to kernel IR by Lowering::run, which
// calls each concern's translation unit in turn (see Lowering.h).
//
//===----------------------------------------------------------------------===//
#include "tkc/Lower/SpecToIR.h"

#include "Lowering.h"

#include "tkc/Lower/Select.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace tkc {

namespace lower {

std::string paramValueName(const spec::ParamValue &value) {
  switch (value.kind) {
  case spec::ParamValue::Kind::Bool:
    return value.boolValue ? "true" : "false";
  default:
    return value.text;
  }
}

std::optional<ir::Kernel> Lowering::run() {
  kernel.specName = spec.name.value;
  kernel.specFile = spec.fileName;
  kernel.name = instance.name;
  kernel.entry = instance.entry;
  kernel.arch = &arch;
  for (size_t i = 0; i < spec.params.size(); ++i)
    kernel.params.emplace_back(spec.params[i].name.value, paramValueName(*instance.values[i]));
  unsigned errorsAtStart = diags.getNumErrors();
  // Missing arch features are reported, but the statements are still
  // checked: a spec gets every error it has in one run.
  checkTemplateFeatures();
  unsigned errorsBefore = diags.getNumErrors();
  declareConstants();
  if (!declareConsumerWarpgroups())
    return std::nullopt;
  declareGlobals();
  declareScalars();
  declareTiles();
  declareGrid();
  declareSequences();
  declareRequirements();
  declareState();
  checkSizeNames();
  if (diags.getNumErrors() != errorsBefore)
    return std::nullopt;

  lowerLoads();
  if (tailStep)
    applyTailStep();
  lowerProgram();
  if (diags.getNumErrors() != errorsBefore)
    return std::nullopt;
  checkEveryLoadIsUsed();
  checkTaskReadsAlone();
  checkSequencedAccesses();
  if (diags.getNumErrors() != errorsAtStart)
    return std::nullopt;
  return std::move(kernel);
}

} // namespace lower

using lower::paramValueName;

namespace {

std::string sanitize(std::string text) {
  for (char &c : text)
    if (!llvm::isAlnum(c) && c != '_')
      c = c == '-' ? 'm' : '_';
  return text;
}

bool isSelected(const spec::KernelSpec &spec, size_t param) {
  return llvm::any_of(spec.selects, [&](const spec::SelectDecl &select) {
    return select.param.value == spec.params[param].name.value;
  });
}

std::string instanceSuffix(const spec::ParamDecl &param, const spec::ParamValue &value) {
  switch (value.kind) {
  case spec::ParamValue::Kind::Bool:
    return value.boolValue ? param.name.value : "";
  case spec::ParamValue::Kind::Name:
    return value.text;
  case spec::ParamValue::Kind::Int:
    return param.name.value + (value.intValue < 0 ? "m" + std::to_string(-value.intValue)
                                                  : std::to_string(value.intValue));
  case spec::ParamValue::Kind::Float:
    return sanitize(param.name.value + value.text);
  }
  return "";
}

} // namespace

bool checkParamRestrictions(const spec::KernelSpec &spec, llvm::ArrayRef<ParamRestriction> only,
                            DiagnosticEngine &diags) {
  bool ok = true;
  for (const ParamRestriction &r : only) {
    auto param = llvm::find_if(spec.params,
                               [&](const spec::ParamDecl &p) { return p.name.value == r.name; });
    if (param == spec.params.end()) {
      llvm::SmallVector<std::string, 4> names;
      for (const spec::ParamDecl &p : spec.params)
        names.push_back(p.name.value);
      if (names.empty())
        diags.report(DiagID::err_param_option_no_params, SourceLoc(), r.name);
      else
        diags.report(DiagID::err_param_option_unknown, SourceLoc(), r.name,
                     llvm::join(names, ", "));
      ok = false;
    } else if (llvm::any_of(spec.selects, [&](const spec::SelectDecl &select) {
                 return select.param.value == r.name;
               })) {
      diags.report(DiagID::err_param_option_selected, SourceLoc(), r.name);
      ok = false;
    } else if (llvm::none_of(param->values, [&](const spec::ParamValue &v) {
                 return paramValueName(v) == r.value;
               })) {
      llvm::SmallVector<std::string, 8> values;
      for (const spec::ParamValue &v : param->values)
        values.push_back(paramValueName(v));
      diags.report(DiagID::err_param_option_value, SourceLoc(), r.name, r.value,
                   llvm::join(values, ", "));
      ok = false;
    }
  }
  return ok;
}

std::vector<Instance> enumerateInstances(const spec::KernelSpec &spec, DiagnosticEngine &diags,
                                         llvm::ArrayRef<ParamRestriction> only) {
  size_t count = 1;
  for (const spec::ParamDecl &param : spec.params) {
    count *= param.values.size();
    if (count > kMaxInstances) {
      diags.report(DiagID::err_sema_too_many_instances, param.name.loc, count, kMaxInstances);
      return {};
    }
  }
  std::vector<Instance> instances;
  for (size_t i = 0; i < count; ++i) {
    Instance instance;
    size_t rest = i;
    std::vector<size_t> choice(spec.params.size());
    for (size_t p = spec.params.size(); p-- > 0;) {
      choice[p] = rest % spec.params[p].values.size();
      rest /= spec.params[p].values.size();
    }
    instance.name = spec.name.value;
    for (size_t p = 0; p < spec.params.size(); ++p) {
      const spec::ParamValue &value = spec.params[p].values[choice[p]];
      instance.values.push_back(&value);
      if (isSelected(spec, p))
        continue; // named by applySelections
      std::string suffix = instanceSuffix(spec.params[p], value);
      if (!suffix.empty())
        instance.name += "_" + suffix;
    }
    instances.push_back(std::move(instance));
  }
  // Short names can collide (two boolean parameters, one true each): then
  // every instance spells out every parameter. Instances that differ only in
  // selected parameters share a launcher, hence a name.
  llvm::StringSet<> names;
  size_t launchers = 1;
  for (size_t p = 0; p < spec.params.size(); ++p)
    if (!isSelected(spec, p))
      launchers *= spec.params[p].values.size();
  for (const Instance &i : instances)
    names.insert(i.name);
  if (names.size() != launchers)
    for (Instance &instance : instances) {
      instance.name = spec.name.value;
      for (size_t p = 0; p < spec.params.size(); ++p)
        if (!isSelected(spec, p))
          instance.name +=
              "_" + spec.params[p].name.value + "_" + sanitize(paramValueName(*instance.values[p]));
    }
  // --param restrictions drop instances after naming, so names stay stable.
  llvm::erase_if(instances, [&](const Instance &instance) {
    for (size_t p = 0; p < spec.params.size(); ++p) {
      bool restricted = false, kept = false;
      for (const ParamRestriction &r : only) {
        if (r.name != spec.params[p].name.value)
          continue;
        restricted = true;
        kept = kept || r.value == paramValueName(*instance.values[p]);
      }
      if (restricted && !kept)
        return true;
    }
    return false;
  });
  if (!applySelections(spec, instances, diags))
    return {};
  return instances;
}

std::optional<ir::Kernel> lowerSpecToIR(const spec::KernelSpec &spec, const Instance &instance,
                                        const ArchInfo &arch, DiagnosticEngine &diags,
                                        std::optional<int64_t> tailStep) {
  return lower::Lowering(spec, instance, arch, diags, tailStep).run();
}

} // namespace tkc
