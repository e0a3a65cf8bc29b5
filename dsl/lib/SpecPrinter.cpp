//===- SpecPrinter.cpp - Deterministic AST dump ----------------------------===//
//
// Part of tkc. See docs/SpecReference.md.
//
//===----------------------------------------------------------------------===//
#include "tkc/dsl/SpecPrinter.h"

#include "llvm/ADT/StringExtras.h"

namespace tkc {

namespace spec {
const char *spelling(DType dtype) {
  switch (dtype) {
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  case DType::F32:
    return "f32";
  case DType::I32:
    return "i32";
  case DType::F8E4M3:
    return "f8e4m3";
  case DType::F8E5M2:
    return "f8e5m2";
  }
  return "?";
}

std::optional<DType> dtypeNamed(llvm::StringRef text) {
  for (DType dtype :
       {DType::BF16, DType::F16, DType::F32, DType::I32, DType::F8E4M3, DType::F8E5M2})
    if (text == spelling(dtype))
      return dtype;
  return std::nullopt;
}

const char *spelling(MemSpace space) { return space == MemSpace::Shared ? "smem" : "reg"; }

const char *spelling(Template tmpl) {
  switch (tmpl) {
  case Template::LCF:
    return "lcf";
  }
  return "?";
}
} // namespace spec

namespace {

class Printer {
public:
  explicit Printer(llvm::raw_ostream &os) : os(os) {}

  void print(const spec::KernelSpec &spec) {
    line(0, spec.name.loc) << "kernel '" << spec.name.value << "'\n";
    if (spec.arch)
      line(1, spec.arch->loc) << "arch " << spec.arch->value << "\n";
    line(1, spec.tmpl.loc) << "template " << spelling(spec.tmpl.value) << "\n";
    for (const spec::ParamDecl &param : spec.params) {
      line(1, param.name.loc) << "param '" << param.name.value << "'\n";
      for (const spec::ParamValue &value : param.values)
        line(2, value.loc) << kindName(value.kind) << " " << value.text << "\n";
    }
    for (const spec::SelectDecl &select : spec.selects) {
      line(1, select.param.loc) << "select '" << select.param.value << "' at launch when\n";
      expr(2, *select.cond);
    }
    for (const spec::ConstantDecl &constant : spec.constants) {
      line(1, constant.name.loc) << "constant '" << constant.name.value << "'\n";
      expr(2, *constant.value);
    }
    for (const spec::GlobalDecl &global : spec.globals) {
      line(1, global.name.loc) << "global '" << global.name.value << "' "
                               << (global.dtypeChoice ? "" : spelling(global.dtype.value))
                               << extents(global.dims) << "\n";
      if (!global.layout.empty())
        line(2, global.layoutLoc) << "layout" << extents(global.layout) << "\n";
      dtypeChoice(global.dtypeChoice);
      when(global.when);
    }
    for (const spec::ScalarDecl &scalar : spec.scalars) {
      line(1, scalar.name.loc) << "scalar '" << scalar.name.value << "' "
                               << spelling(scalar.dtype.value) << "\n";
      if (scalar.defaultValue) {
        line(2, scalar.defaultValue->loc) << "default\n";
        expr(3, *scalar.defaultValue);
      }
      if (scalar.check) {
        line(2, scalar.check->loc) << "check\n";
        expr(3, *scalar.check);
      }
    }
    for (const spec::TileDecl &tile : spec.tiles) {
      line(1, tile.name.loc) << "tile '" << tile.name.value << "' " << spelling(tile.space.value)
                             << " " << (tile.dtypeChoice ? "" : spelling(tile.dtype.value))
                             << extents(tile.shape) << "\n";
      dtypeChoice(tile.dtypeChoice);
      if (tile.stages) {
        line(2, tile.stages->loc) << "stages ";
        if (tile.stages->isAuto)
          os << "auto\n";
        else
          os << tile.stages->count << "\n";
      }
      for (const auto &member : tile.of)
        line(2, member.loc) << "of '" << member.value << "'\n";
      if (tile.per)
        line(2, tile.per->loc) << "per " << tile.per->value << "\n";
      if (tile.count)
        line(2, tile.count->loc) << "count " << tile.count->value << "\n";
      when(tile.when);
    }
    if (spec.grid) {
      line(1, spec.grid->loc) << "grid\n";
      for (const spec::IterVar &var : spec.grid->tasks) {
        line(2, var.name.loc) << "task '" << var.name.value << "'\n";
        expr(3, *var.extent);
      }
      for (const spec::IterVar &var : spec.grid->loop) {
        line(2, var.name.loc) << "loop '" << var.name.value << "'\n";
        expr(3, *var.extent);
      }
      for (const spec::IterVar &var : spec.grid->start) {
        line(2, var.name.loc) << "start '" << var.name.value << "'\n";
        expr(3, *var.extent);
      }
      for (const spec::IterVar &var : spec.grid->tail) {
        line(2, var.name.loc) << "tail '" << var.name.value << "'\n";
        expr(3, *var.extent);
      }
      for (const spec::IterVar &var : spec.grid->sequences) {
        line(2, var.name.loc) << "sequences of '" << var.name.value << "' split at\n";
        expr(3, *var.extent);
      }
      if (spec.grid->order)
        line(2, spec.grid->order->loc) << "order " << spec.grid->order->value << "\n";
      if (spec.grid->loopOrder)
        line(2, spec.grid->loopOrder->loc) << "loop order " << spec.grid->loopOrder->value << "\n";
      if (spec.grid->lastWave)
        line(2, spec.grid->lastWave->loc) << "last wave " << spec.grid->lastWave->value << "\n";
      if (const auto &whole = spec.grid->wholeTiles) {
        line(2, whole->loc) << "whole tiles when\n";
        expr(3, *whole);
      }
    }
    line(1, spec.producer.loc) << "producer\n";
    if (spec.producer.warpgroups)
      line(2, spec.producer.warpgroups->loc)
          << "warpgroups " << spec.producer.warpgroups->value << "\n";
    body(spec.producer.load);
    line(1, spec.consumer.loc) << "consumer\n";
    if (spec.consumer.warpgroups)
      line(2, spec.consumer.warpgroups->loc)
          << "warpgroups " << spec.consumer.warpgroups->value << "\n";
    if (spec.consumer.warpgroupsName)
      line(2, spec.consumer.warpgroupsName->loc)
          << "warpgroups " << spec.consumer.warpgroupsName->value << "\n";
    for (const spec::StateDecl &state : spec.consumer.state)
      line(2, state.name.loc) << "state '" << state.name.value << "' \""
                              << escaped(state.type.value) << "\"\n";
    body(spec.consumer.setup);
    body(spec.consumer.compute);
    body(spec.consumer.finish);
  }

private:
  llvm::raw_ostream &line(unsigned depth, SourceLoc loc) {
    os.indent(depth * 2);
    os << "@" << loc.line << ":" << loc.col << " ";
    return os;
  }

  void body(const std::optional<spec::StageBody> &stage) {
    if (!stage)
      return;
    line(2, stage->name.loc) << stage->name.value << "\n";
    for (const stmt::Stmt &statement : stage->stmts) {
      if (statement.target) {
        line(3, statement.loc) << "assign " << statement.op << "\n";
        expr(4, *statement.target);
      } else {
        line(3, statement.loc) << "eval\n";
      }
      expr(4, *statement.value);
      if (statement.guard) {
        line(4, statement.guard->loc) << "if\n";
        expr(5, *statement.guard);
      }
    }
  }

  void dtypeChoice(const std::unique_ptr<stmt::Expr> &choice) {
    if (!choice)
      return;
    line(2, choice->loc) << "dtype chosen per instantiation\n";
    expr(3, *choice);
  }

  void when(const std::unique_ptr<stmt::Expr> &condition) {
    if (!condition)
      return;
    line(2, condition->loc) << "when\n";
    expr(3, *condition);
  }

  void expr(unsigned depth, const stmt::Expr &node) {
    using Kind = stmt::Expr::Kind;
    line(depth, node.loc);
    switch (node.kind) {
    case Kind::Name:
      os << "name " << node.text << "\n";
      break;
    case Kind::Number:
      os << "number " << node.text << "\n";
      break;
    case Kind::Ellipsis:
      os << "ellipsis\n";
      break;
    case Kind::Unary:
      os << "unary " << node.text << "\n";
      break;
    case Kind::Binary:
      os << "binary " << node.text << "\n";
      break;
    case Kind::Call:
      os << "call " << node.text << "\n";
      break;
    case Kind::Index:
      os << "index\n";
      break;
    case Kind::Member:
      os << "member " << node.text << "\n";
      break;
    case Kind::Conditional:
      os << "conditional (condition, then, else)\n";
      break;
    }
    for (const auto &operand : node.operands)
      expr(depth + 1, *operand);
  }

  static std::string extents(const std::vector<spec::Extent> &dims) {
    std::string out = "[";
    for (size_t i = 0; i < dims.size(); ++i) {
      if (i)
        out += ", ";
      out += dims[i].isNumber() ? std::to_string(*dims[i].number) : dims[i].name;
    }
    return out + "]";
  }

  /// C-style escapes, so that a body prints on one line.
  static std::string escaped(llvm::StringRef text) {
    std::string out;
    for (char c : text) {
      switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += "\\x" + llvm::utohexstr(static_cast<unsigned char>(c), /*LowerCase=*/true, 2);
        else
          out += c;
      }
    }
    return out;
  }

  static const char *kindName(spec::ParamValue::Kind kind) {
    switch (kind) {
    case spec::ParamValue::Kind::Int:
      return "int";
    case spec::ParamValue::Kind::Float:
      return "float";
    case spec::ParamValue::Kind::Bool:
      return "bool";
    case spec::ParamValue::Kind::Name:
      return "name";
    }
    return "?";
  }

  llvm::raw_ostream &os;
};

} // namespace

void printSpec(const spec::KernelSpec &spec, llvm::raw_ostream &os) { Printer(os).print(spec); }

} // namespace tkc
