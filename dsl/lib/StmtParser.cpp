//===- StmtParser.cpp - Parse stage bodies ---------------------------------===//
//
// Part of tkc. See docs/SpecReference.md.
//
//===----------------------------------------------------------------------===//
//
// Grammar (lowest precedence first; all binary operators associate left):
//
//   body       := stmt ((NEWLINE | ';') stmt)*
//   stmt       := expr (('=' | '+=' | '-=' | '*=' | '/=') expr)? ('if' expr)?
//   expr       := conj ('or' conj)*
//   conj       := neg ('and' neg)*
//   neg        := 'not' neg | compare
//   compare    := additive (('<' | '<=' | '>' | '>=' | '==' | '!=') additive)*
//   additive   := term (('+' | '-') term)*
//   term       := unary (('*' | '/' | '@') unary)*
//   unary      := '-' unary | postfix
//   postfix    := primary ('(' args ')' | '[' indices ']' | '.' NAME)*
//   primary    := NAME | NUMBER | '(' expr ')'
//   indices    := (expr | '...') (',' (expr | '...'))*
//
//===----------------------------------------------------------------------===//
#include "tkc/dsl/StmtParser.h"

#include "llvm/ADT/StringExtras.h"

#include <optional>

namespace tkc {

namespace {

using stmt::Expr;

/// Where each line of a body starts in the spec. Literal block scalars keep
/// their lines, so each body line is found in the source below the block
/// indicator; a one-line scalar is found on its own line. When a line cannot
/// be found (folded scalars), its tokens are located at the body's start.
std::vector<SourceLoc> locateLines(const spec::StageBody &body, const SourceManager &sm) {
  llvm::SmallVector<llvm::StringRef, 16> lines;
  llvm::StringRef(body.text).split(lines, '\n');
  std::vector<SourceLoc> starts(lines.size(), body.textLoc);
  SourceLoc at = body.textLoc;
  llvm::StringRef first = sm.getLineText(at.bufferId, at.line);
  bool block = at.col >= 1 && at.col <= first.size() &&
               (first[at.col - 1] == '|' || first[at.col - 1] == '>');
  unsigned cursor = block ? at.line + 1 : at.line;
  for (size_t i = 0; i < lines.size(); ++i) {
    llvm::StringRef want = lines[i];
    if (want.trim().empty())
      continue;
    for (unsigned line = cursor; line < cursor + 64; ++line) {
      llvm::StringRef text = sm.getLineText(at.bufferId, line);
      // Search from the value's column on its first line (not in the key).
      size_t from = line == at.line ? at.col - 1 : 0;
      size_t found = text.find(want, from);
      if (found == llvm::StringRef::npos)
        continue;
      if (block && !text.take_front(found).trim().empty())
        continue;
      starts[i] = SourceLoc{at.bufferId, line, static_cast<unsigned>(found) + 1};
      cursor = line + 1;
      break;
    }
  }
  return starts;
}

struct Token {
  enum class Kind { Name, Number, Punct, Newline, End };
  Kind kind = Kind::End;
  std::string text;
  SourceLoc loc;

  std::string describe() const {
    switch (kind) {
    case Kind::Newline:
      return "the end of the line";
    case Kind::End:
      return "the end of the body";
    default:
      return "'" + text + "'";
    }
  }
};

class Lexer {
public:
  Lexer(llvm::StringRef text, std::vector<SourceLoc> lineStarts)
      : text(text), lineStarts(std::move(lineStarts)) {}

  /// Splits the body into tokens; on an unexpected character returns it
  /// (with its location) instead.
  std::optional<Token> run(std::vector<Token> &tokens) {
    int depth = 0;
    while (pos < text.size()) {
      char c = text[pos];
      if (c == '\n') {
        if (depth == 0)
          tokens.push_back(make(Token::Kind::Newline, 1));
        advance(1);
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r') {
        advance(1);
        continue;
      }
      if (c == '#') {
        while (pos < text.size() && text[pos] != '\n')
          advance(1);
        continue;
      }
      if (llvm::isAlpha(c) || c == '_') {
        size_t n = 1;
        while (pos + n < text.size() && (llvm::isAlnum(text[pos + n]) || text[pos + n] == '_'))
          ++n;
        tokens.push_back(make(Token::Kind::Name, n));
        advance(n);
        continue;
      }
      if (llvm::isDigit(c) || (c == '.' && pos + 1 < text.size() && llvm::isDigit(text[pos + 1]))) {
        tokens.push_back(make(Token::Kind::Number, numberLength()));
        advance(tokens.back().text.size());
        continue;
      }
      static const char *const kPuncts[] = {
          "...", "+=", "-=", "*=", "/=", "<=", ">=", "==", "!=", "(", ")", "[",
          "]",   ",",  ".",  ";",  "=",  "+",  "-",  "*",  "/",  "@", "<", ">"};
      bool matched = false;
      for (const char *punct : kPuncts) {
        if (!text.substr(pos).startswith(punct))
          continue;
        size_t n = std::strlen(punct);
        if (punct[0] == '(' || punct[0] == '[')
          ++depth;
        else if ((punct[0] == ')' || punct[0] == ']') && depth > 0)
          --depth;
        tokens.push_back(make(Token::Kind::Punct, n));
        advance(n);
        matched = true;
        break;
      }
      if (!matched) {
        // Report the whole UTF-8 sequence, not its first byte.
        size_t n = 1;
        while (pos + n < text.size() && (static_cast<unsigned char>(text[pos + n]) & 0xc0) == 0x80)
          ++n;
        return make(Token::Kind::Punct, n);
      }
    }
    tokens.push_back(make(Token::Kind::End, 0));
    return std::nullopt;
  }

private:
  size_t numberLength() const {
    size_t n = 0;
    auto digits = [&] {
      while (pos + n < text.size() && llvm::isDigit(text[pos + n]))
        ++n;
    };
    digits();
    if (pos + n < text.size() && text[pos + n] == '.' && !text.substr(pos + n).startswith("...")) {
      ++n;
      digits();
    }
    if (pos + n < text.size() && (text[pos + n] == 'e' || text[pos + n] == 'E')) {
      size_t save = n++;
      if (pos + n < text.size() && (text[pos + n] == '+' || text[pos + n] == '-'))
        ++n;
      size_t before = n;
      digits();
      if (n == before)
        n = save;
    }
    return n;
  }

  Token make(Token::Kind kind, size_t length) const {
    Token token;
    token.kind = kind;
    token.text = text.substr(pos, length).str();
    SourceLoc start = line < lineStarts.size() ? lineStarts[line] : SourceLoc();
    token.loc = start;
    if (start.isValid())
      token.loc.col = start.col + static_cast<unsigned>(col);
    return token;
  }

  void advance(size_t n) {
    for (size_t i = 0; i < n; ++i, ++pos) {
      if (text[pos] == '\n') {
        ++line;
        col = 0;
      } else {
        ++col;
      }
    }
  }

  llvm::StringRef text;
  std::vector<SourceLoc> lineStarts;
  size_t pos = 0;
  size_t line = 0;
  size_t col = 0;
};

/// Words that are operators, never names.
const llvm::StringRef kKeywords[] = {"if", "else", "not", "and", "or"};

/// Thrown to abandon a body at its first syntax error (already reported).
struct SyntaxError {};

class Parser {
public:
  Parser(std::vector<Token> tokens, std::string context, DiagnosticEngine &diags)
      : tokens(std::move(tokens)), context(std::move(context)), diags(diags) {}

  std::vector<stmt::Stmt> parseBody() {
    std::vector<stmt::Stmt> stmts;
    while (true) {
      while (isPunct(";") || peek().kind == Token::Kind::Newline)
        ++index;
      if (peek().kind == Token::Kind::End)
        return stmts;
      stmts.push_back(parseStmt());
      if (!isPunct(";") && peek().kind != Token::Kind::Newline && peek().kind != Token::Kind::End)
        fail("an operator, ';' or the end of the line");
    }
  }

private:
  const Token &peek() const { return tokens[index]; }
  bool isPunct(llvm::StringRef text) const {
    return peek().kind == Token::Kind::Punct && peek().text == text;
  }
  /// An operator: punctuation, or one of the keywords 'and', 'or', 'not'.
  bool isOperator(llvm::StringRef text) const {
    return (peek().kind == Token::Kind::Punct || peek().kind == Token::Kind::Name) &&
           peek().text == text;
  }
  Token take() { return tokens[index++]; }

  [[noreturn]] void fail(const std::string &expected) {
    diags.report(DiagID::err_stmt_expected, peek().loc, expected, context, peek().describe());
    throw SyntaxError{};
  }

  void expect(llvm::StringRef punct) {
    if (!isPunct(punct))
      fail("'" + punct.str() + "'");
    ++index;
  }

  static std::string describeExpr(const Expr &expr) {
    switch (expr.kind) {
    case Expr::Kind::Name:
      return "'" + expr.text + "'";
    case Expr::Kind::Number:
      return "the number " + expr.text;
    case Expr::Kind::Call:
      return "a call of '" + expr.text + "'";
    case Expr::Kind::Member:
      return "'." + expr.text + "'";
    default:
      return "an expression";
    }
  }

  stmt::Stmt parseStmt() {
    stmt::Stmt statement;
    statement.loc = peek().loc;
    std::unique_ptr<Expr> lhs = parseExpr();
    for (const char *op : {"=", "+=", "-=", "*=", "/="}) {
      if (!isPunct(op))
        continue;
      Token opToken = take();
      if (lhs->kind != Expr::Kind::Name && lhs->kind != Expr::Kind::Index) {
        diags.report(DiagID::err_stmt_bad_target, lhs->loc, describeExpr(*lhs), context,
                     opToken.text);
        throw SyntaxError{};
      }
      statement.op = opToken.text;
      statement.target = std::move(lhs);
      statement.value = parseExpr();
      parseGuard(statement);
      return statement;
    }
    statement.value = std::move(lhs);
    parseGuard(statement);
    return statement;
  }

  void parseGuard(stmt::Stmt &statement) {
    if (!isOperator("if"))
      return;
    ++index;
    statement.guard = parseExpr();
  }

public:
  /// One expression that must make up the whole text.
  std::unique_ptr<Expr> parseWholeExpr() {
    std::unique_ptr<Expr> result = parseValue();
    if (peek().kind != Token::Kind::End)
      fail("an operator or the end of the value");
    return result;
  }

private:
  /// `a`, or `a if c else b` where b may be such a value again (`x if c else y if d else z`,
  /// as in Python). A statement's `if` is its guard, so the conditional form exists only where
  /// a whole value is one expression.
  std::unique_ptr<Expr> parseValue() {
    std::unique_ptr<Expr> result = parseExpr();
    if (!isOperator("if"))
      return result;
    auto node = std::make_unique<Expr>();
    node->kind = Expr::Kind::Conditional;
    node->text = "if";
    node->loc = take().loc;
    std::unique_ptr<Expr> cond = parseExpr();
    if (!isOperator("else"))
      fail("'else'");
    ++index;
    std::unique_ptr<Expr> otherwise = parseValue();
    node->operands.push_back(std::move(cond));
    node->operands.push_back(std::move(result));
    node->operands.push_back(std::move(otherwise));
    return node;
  }

  std::unique_ptr<Expr> binary(std::string op, SourceLoc loc, std::unique_ptr<Expr> lhs,
                               std::unique_ptr<Expr> rhs) {
    auto node = std::make_unique<Expr>();
    node->kind = Expr::Kind::Binary;
    node->text = std::move(op);
    node->loc = loc;
    node->operands.push_back(std::move(lhs));
    node->operands.push_back(std::move(rhs));
    return bounded(std::move(node));
  }

  /// `node` with its depth and operations set from its operands; an
  /// expression with more than kMaxOperations (a chain of thousands of
  /// operators, or a sum of hundreds of terms) is an error at `node`.
  std::unique_ptr<Expr> bounded(std::unique_ptr<Expr> node) {
    unsigned deepest = 0, operations = 1;
    for (const auto &operand : node->operands) {
      deepest = std::max(deepest, operand->depth);
      operations += operand->operations;
    }
    node->depth = deepest + 1;
    node->operations = operations;
    if (operations > kMaxOperations) {
      diags.report(DiagID::err_stmt_too_many_operations, node->loc, kMaxOperations, context);
      throw SyntaxError{};
    }
    return node;
  }

  template <typename Next>
  std::unique_ptr<Expr> parseLeftAssoc(std::initializer_list<const char *> ops, Next next) {
    std::unique_ptr<Expr> lhs = (this->*next)();
    while (true) {
      const char *matched = nullptr;
      for (const char *op : ops)
        if (isOperator(op))
          matched = op;
      if (!matched)
        return lhs;
      Token opToken = take();
      std::unique_ptr<Expr> rhs = (this->*next)();
      lhs = binary(opToken.text, opToken.loc, std::move(lhs), std::move(rhs));
    }
  }

  std::unique_ptr<Expr> parseExpr() { return parseLeftAssoc({"or"}, &Parser::parseConj); }
  std::unique_ptr<Expr> parseConj() { return parseLeftAssoc({"and"}, &Parser::parseNeg); }
  std::unique_ptr<Expr> parseNeg() {
    return parsePrefix("not", &Parser::parseNeg, &Parser::parseCompare);
  }
  std::unique_ptr<Expr> parseCompare() {
    return parseLeftAssoc({"<", "<=", ">", ">=", "==", "!="}, &Parser::parseAdditive);
  }
  std::unique_ptr<Expr> parseAdditive() { return parseLeftAssoc({"+", "-"}, &Parser::parseTerm); }
  std::unique_ptr<Expr> parseTerm() { return parseLeftAssoc({"*", "/", "@"}, &Parser::parseUnary); }

  std::unique_ptr<Expr> parseUnary() {
    return parsePrefix("-", &Parser::parseUnary, &Parser::parsePostfix);
  }

  /// `op operand` (recursing through `self`), or else `next`.
  std::unique_ptr<Expr> parsePrefix(llvm::StringRef op, std::unique_ptr<Expr> (Parser::*self)(),
                                    std::unique_ptr<Expr> (Parser::*next)()) {
    if (!isOperator(op))
      return (this->*next)();
    if (++nesting > kMaxNesting)
      fail("fewer nested operators");
    Token opToken = take();
    auto node = std::make_unique<Expr>();
    node->kind = Expr::Kind::Unary;
    node->text = opToken.text;
    node->loc = opToken.loc;
    node->operands.push_back((this->*self)());
    --nesting;
    return bounded(std::move(node));
  }

  std::unique_ptr<Expr> parsePostfix() {
    std::unique_ptr<Expr> base = parsePrimary();
    while (true) {
      if (isPunct("(")) {
        if (base->kind != Expr::Kind::Name) {
          diags.report(DiagID::err_stmt_bad_callee, peek().loc, context, describeExpr(*base));
          throw SyntaxError{};
        }
        ++index;
        if (++nesting > kMaxNesting)
          fail("fewer nested calls");
        base->kind = Expr::Kind::Call;
        if (!isPunct(")")) {
          base->operands.push_back(parseExpr());
          while (isPunct(",")) {
            ++index;
            base->operands.push_back(parseExpr());
          }
        }
        expect(")");
        --nesting;
        base = bounded(std::move(base));
      } else if (isPunct("[")) {
        auto node = std::make_unique<Expr>();
        node->kind = Expr::Kind::Index;
        node->loc = base->loc;
        node->operands.push_back(std::move(base));
        ++index;
        if (++nesting > kMaxNesting)
          fail("fewer nested indices");
        node->operands.push_back(parseIndex());
        while (isPunct(",")) {
          ++index;
          node->operands.push_back(parseIndex());
        }
        expect("]");
        --nesting;
        base = bounded(std::move(node));
      } else if (isPunct(".")) {
        ++index;
        if (peek().kind != Token::Kind::Name)
          fail("a name after '.'");
        auto node = std::make_unique<Expr>();
        node->kind = Expr::Kind::Member;
        node->text = peek().text;
        node->loc = peek().loc;
        node->operands.push_back(std::move(base));
        ++index;
        base = bounded(std::move(node));
      } else {
        return base;
      }
    }
  }

  std::unique_ptr<Expr> parseIndex() {
    if (isPunct("...")) {
      auto node = std::make_unique<Expr>();
      node->kind = Expr::Kind::Ellipsis;
      node->text = "...";
      node->loc = take().loc;
      return node;
    }
    return parseExpr();
  }

  std::unique_ptr<Expr> parsePrimary() {
    if (++nesting > kMaxNesting)
      fail("fewer nested parentheses and brackets");
    std::unique_ptr<Expr> result;
    bool keyword = peek().kind == Token::Kind::Name &&
                   llvm::is_contained(llvm::ArrayRef<llvm::StringRef>(kKeywords), peek().text);
    if (peek().kind == Token::Kind::Name && peek().text.size() > stmt::kMaxNameLength) {
      diags.report(DiagID::err_name_too_long, peek().loc, peek().text.substr(0, 24),
                   peek().text.size(), stmt::kMaxNameLength);
      throw SyntaxError{};
    }
    if (!keyword && (peek().kind == Token::Kind::Name || peek().kind == Token::Kind::Number)) {
      result = std::make_unique<Expr>();
      result->kind = peek().kind == Token::Kind::Name ? Expr::Kind::Name : Expr::Kind::Number;
      result->text = peek().text;
      result->loc = peek().loc;
      ++index;
    } else if (isPunct("(")) {
      ++index;
      result = parseExpr();
      expect(")");
    } else {
      fail("an expression");
    }
    --nesting;
    return result;
  }

  /// Bounds recursion on inputs such as "((((...": far above what a
  /// statement needs, far below what the stack allows.
  static constexpr unsigned kMaxNesting = 256;
  /// Bounds an expression's size, and so its depth, however it is built (a
  /// chain of operators nests as deep as it is long): a margin for every later
  /// recursion, and CUDA ptxas compiles without spills (a sum of 200 terms
  /// spilled, of 64 did not).
  static constexpr unsigned kMaxOperations = 64;

  std::vector<Token> tokens;
  std::string context;
  DiagnosticEngine &diags;
  size_t index = 0;
  unsigned nesting = 0;
};

} // namespace

std::unique_ptr<stmt::Expr> parseExpression(llvm::StringRef text, SourceLoc loc,
                                            llvm::StringRef what, DiagnosticEngine &diags) {
  spec::StageBody holder{{what.str(), loc}, text.str(), loc, {}};
  Lexer lexer(text, locateLines(holder, diags.getSourceManager()));
  std::vector<Token> tokens;
  if (std::optional<Token> bad = lexer.run(tokens)) {
    diags.report(DiagID::err_stmt_unexpected_character, bad->loc, bad->text, what.str());
    return nullptr;
  }
  try {
    return Parser(std::move(tokens), what.str(), diags).parseWholeExpr();
  } catch (const SyntaxError &) {
    return nullptr;
  }
}

bool parseStatements(spec::StageBody &body, DiagnosticEngine &diags) {
  std::string context = "'" + body.name.value + "'";
  Lexer lexer(body.text, locateLines(body, diags.getSourceManager()));
  std::vector<Token> tokens;
  if (std::optional<Token> bad = lexer.run(tokens)) {
    diags.report(DiagID::err_stmt_unexpected_character, bad->loc, bad->text, context);
    return false;
  }
  try {
    body.stmts = Parser(std::move(tokens), context, diags).parseBody();
  } catch (const SyntaxError &) {
    return false;
  }
  if (body.stmts.empty()) {
    diags.report(DiagID::err_stmt_empty_body, body.textLoc, context);
    return false;
  }
  return true;
}

} // namespace tkc
