//! Constraint expressions over parameters, e.g. `baseM * baseK * 2 <= 65536`.
//!
//! A small recursive-descent parser into an AST whose variables are resolved to parameter
//! indices at parse time: no eval of arbitrary code, bounded depth and length, and evaluation
//! allocates nothing. Supports + - * / // % **, comparisons, && || ! (and, or, not), string
//! literals compared with == and !=, and min, max, abs, floor, ceil, log2, sqrt.

use crate::value::{Config, Value};

const MAX_LEN: usize = 4096;
const MAX_DEPTH: usize = 64;

/// A parsed constraint; `holds` tells whether a configuration satisfies it.
#[derive(Clone, Debug)]
pub struct Expr {
    source: String,
    root: Node,
}

#[derive(Clone, Debug)]
enum Node {
    Num(f64),
    Str(String),
    Var(usize),
    Neg(Box<Node>),
    Not(Box<Node>),
    Bin(Op, Box<Node>, Box<Node>),
    Call(Func, Vec<Node>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Add, Sub, Mul, Div, FloorDiv, Rem, Pow, Lt, Le, Gt, Ge, Eq, Ne, And, Or,
}

#[derive(Clone, Copy, Debug)]
enum Func {
    Min, Max, Abs, Floor, Ceil, Log2, Sqrt,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Str(String),
    Ident(String),
    Sym(&'static str),
}

enum Val<'a> {
    Num(f64),
    Str(&'a str),
}

impl Expr {
    /// Parses `src`, resolving identifiers against `names`. The error says what and where.
    pub fn parse(src: &str, names: &[String]) -> Result<Expr, String> {
        if src.len() > MAX_LEN {
            return Err(format!("constraint is longer than {MAX_LEN} characters"));
        }
        let toks = tokenize(src)?;
        let mut p = Parser { toks, pos: 0, names, depth: 0 };
        let root = p.or()?;
        if p.pos < p.toks.len() {
            return Err(format!("constraint '{src}': unexpected {:?} after the expression", p.toks[p.pos]));
        }
        Ok(Expr { source: src.to_string(), root })
    }

    /// The text it was parsed from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// True when the configuration satisfies the constraint (a non-zero number).
    pub fn holds(&self, c: &Config) -> bool {
        match eval(&self.root, c) {
            Val::Num(x) => x != 0.0 && !x.is_nan(),
            Val::Str(s) => !s.is_empty(),
        }
    }
}

fn tokenize(src: &str) -> Result<Vec<Tok>, String> {
    let b = src.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    const SYMS: [&str; 22] = [
        "**", "//", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "!",
        "(", ")", ",", "=", "&", "|",
    ];
    while i < b.len() {
        let c = b[i] as char;
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || (c == '.' && i + 1 < b.len() && (b[i + 1] as char).is_ascii_digit()) {
            let start = i;
            while i < b.len() && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'.'
                || ((b[i] == b'-' || b[i] == b'+') && (b[i - 1] == b'e' || b[i - 1] == b'E')))
            {
                i += 1;
            }
            let t = &src[start..i];
            let x: f64 = t.parse().map_err(|_| format!("bad number '{t}' at column {}", start + 1))?;
            out.push(Tok::Num(x));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(src[start..i].to_string()));
        } else if c == '\'' || c == '"' {
            let start = i + 1;
            let end = src[start..].find(c).ok_or_else(|| format!("unterminated string at column {}", i + 1))?;
            out.push(Tok::Str(src[start..start + end].to_string()));
            i = start + end + 1;
        } else if let Some(s) = SYMS.iter().find(|s| src[i..].starts_with(**s)) {
            if *s == "=" || *s == "&" || *s == "|" {
                return Err(format!("unknown operator '{s}' at column {} (use ==, && or ||)", i + 1));
            }
            out.push(Tok::Sym(s));
            i += s.len();
        } else {
            let ch = src[i..].chars().next().unwrap_or('?');
            return Err(format!("unexpected character '{ch}' at column {}", i + 1));
        }
    }
    Ok(out)
}

struct Parser<'a> {
    toks: Vec<Tok>,
    pos: usize,
    names: &'a [String],
    depth: usize,
}

impl Parser<'_> {
    fn peek_sym(&self, s: &str) -> bool {
        matches!(self.toks.get(self.pos), Some(Tok::Sym(t)) if *t == s)
            || matches!(self.toks.get(self.pos), Some(Tok::Ident(w)) if
                (s == "&&" && w == "and") || (s == "||" && w == "or") || (s == "!" && w == "not"))
    }
    fn eat(&mut self, s: &str) -> bool {
        if self.peek_sym(s) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            Err(format!("constraint nests deeper than {MAX_DEPTH} levels"))
        } else {
            Ok(())
        }
    }
    fn bin(&mut self, ops: &[(&str, Op)], next: fn(&mut Self) -> Result<Node, String>) -> Result<Node, String> {
        let mut left = next(self)?;
        'outer: loop {
            for (s, op) in ops {
                if self.eat(s) {
                    let right = next(self)?;
                    left = Node::Bin(*op, Box::new(left), Box::new(right));
                    continue 'outer;
                }
            }
            return Ok(left);
        }
    }
    fn or(&mut self) -> Result<Node, String> {
        self.enter()?;
        let r = self.bin(&[("||", Op::Or)], Self::and);
        self.depth -= 1;
        r
    }
    fn and(&mut self) -> Result<Node, String> {
        self.bin(&[("&&", Op::And)], Self::not)
    }
    fn not(&mut self) -> Result<Node, String> {
        if self.eat("!") {
            self.enter()?;
            let inner = self.not()?;
            self.depth -= 1;
            return Ok(Node::Not(Box::new(inner)));
        }
        self.cmp()
    }
    fn cmp(&mut self) -> Result<Node, String> {
        let ops = [("<=", Op::Le), (">=", Op::Ge), ("==", Op::Eq), ("!=", Op::Ne), ("<", Op::Lt), (">", Op::Gt)];
        self.bin(&ops, Self::sum)
    }
    fn sum(&mut self) -> Result<Node, String> {
        self.bin(&[("+", Op::Add), ("-", Op::Sub)], Self::prod)
    }
    fn prod(&mut self) -> Result<Node, String> {
        self.bin(&[("*", Op::Mul), ("//", Op::FloorDiv), ("/", Op::Div), ("%", Op::Rem)], Self::unary)
    }
    fn unary(&mut self) -> Result<Node, String> {
        if self.eat("-") {
            self.enter()?;
            let inner = self.unary()?;
            self.depth -= 1;
            return Ok(Node::Neg(Box::new(inner)));
        }
        if self.eat("+") {
            return self.unary();
        }
        let base = self.atom()?;
        if self.eat("**") {
            self.enter()?;
            let exp = self.unary()?;
            self.depth -= 1;
            return Ok(Node::Bin(Op::Pow, Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }
    fn atom(&mut self) -> Result<Node, String> {
        let tok = self.toks.get(self.pos).cloned().ok_or("constraint ends too early")?;
        self.pos += 1;
        match tok {
            Tok::Num(x) => Ok(Node::Num(x)),
            Tok::Str(s) => Ok(Node::Str(s)),
            Tok::Sym("(") => {
                let inner = self.or()?;
                if !self.eat(")") {
                    return Err("missing ')'".into());
                }
                Ok(inner)
            }
            Tok::Ident(name) => {
                if self.eat("(") {
                    let f = match name.as_str() {
                        "min" => Func::Min, "max" => Func::Max, "abs" => Func::Abs,
                        "floor" => Func::Floor, "ceil" => Func::Ceil, "log2" => Func::Log2,
                        "sqrt" => Func::Sqrt,
                        _ => return Err(format!("unknown function '{name}'")),
                    };
                    let mut args = Vec::new();
                    if !self.eat(")") {
                        loop {
                            args.push(self.or()?);
                            if self.eat(")") {
                                break;
                            }
                            if !self.eat(",") {
                                return Err(format!("expected ',' or ')' in {name}(...)"));
                            }
                        }
                    }
                    let want_two = matches!(f, Func::Min | Func::Max);
                    if (want_two && args.is_empty()) || (!want_two && args.len() != 1) {
                        return Err(format!("wrong number of arguments to {name}"));
                    }
                    return Ok(Node::Call(f, args));
                }
                match name.as_str() {
                    "True" | "true" => Ok(Node::Num(1.0)),
                    "False" | "false" => Ok(Node::Num(0.0)),
                    _ => self.names.iter().position(|n| *n == name).map(Node::Var)
                        .ok_or_else(|| format!("unknown parameter '{name}' in constraint")),
                }
            }
            Tok::Sym(s) => Err(format!("unexpected '{s}'")),
        }
    }
}

fn num(v: Val) -> f64 {
    match v {
        Val::Num(x) => x,
        Val::Str(_) => f64::NAN,
    }
}

fn eval<'a>(n: &'a Node, c: &'a Config) -> Val<'a> {
    match n {
        Node::Num(x) => Val::Num(*x),
        Node::Str(s) => Val::Str(s),
        Node::Var(i) => match c.0.get(*i) {
            Some(Value::Str(s)) => Val::Str(s),
            Some(v) => Val::Num(v.as_f64().unwrap_or(f64::NAN)),
            None => Val::Num(f64::NAN),
        },
        Node::Neg(a) => Val::Num(-num(eval(a, c))),
        Node::Not(a) => Val::Num(if num(eval(a, c)) == 0.0 { 1.0 } else { 0.0 }),
        Node::Bin(op, a, b) => {
            let (x, y) = (eval(a, c), eval(b, c));
            if let (Val::Str(s), Val::Str(t)) = (&x, &y) {
                return Val::Num(match op {
                    Op::Eq => (s == t) as u8 as f64,
                    Op::Ne => (s != t) as u8 as f64,
                    _ => f64::NAN,
                });
            }
            let (x, y) = (num(x), num(y));
            let t = |b: bool| if b { 1.0 } else { 0.0 };
            Val::Num(match op {
                Op::Add => x + y,
                Op::Sub => x - y,
                Op::Mul => x * y,
                Op::Div => x / y,
                Op::FloorDiv => libm::floor(x / y),
                Op::Rem => x - y * libm::floor(x / y),
                Op::Pow => libm::pow(x, y),
                Op::Lt => t(x < y),
                Op::Le => t(x <= y),
                Op::Gt => t(x > y),
                Op::Ge => t(x >= y),
                Op::Eq => t(x == y),
                Op::Ne => t(x != y),
                Op::And => t(x != 0.0 && y != 0.0),
                Op::Or => t(x != 0.0 || y != 0.0),
            })
        }
        Node::Call(f, args) => {
            let a0 = num(eval(&args[0], c));
            Val::Num(match f {
                Func::Min => args[1..].iter().fold(a0, |m, e| m.min(num(eval(e, c)))),
                Func::Max => args[1..].iter().fold(a0, |m, e| m.max(num(eval(e, c)))),
                Func::Abs => a0.abs(),
                Func::Floor => libm::floor(a0),
                Func::Ceil => libm::ceil(a0),
                Func::Log2 => libm::log2(a0),
                Func::Sqrt => libm::sqrt(a0),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["baseM".into(), "baseK".into(), "order".into()]
    }
    fn cfg(m: i64, k: i64, o: &str) -> Config {
        Config(vec![Value::Int(m), Value::Int(k), Value::Str(o.into())])
    }

    #[test]
    fn arithmetic_and_comparisons() {
        let e = Expr::parse("baseM * baseK * 2 <= 65536", &names()).unwrap();
        assert!(e.holds(&cfg(128, 128, "m")));
        assert!(!e.holds(&cfg(256, 256, "m")));
        let e = Expr::parse("baseM % 16 == 0 and not (baseK > 64) || order == 'n'", &names()).unwrap();
        assert!(e.holds(&cfg(32, 64, "m")));
        assert!(!e.holds(&cfg(33, 64, "m")));
        assert!(e.holds(&cfg(33, 128, "n")));
        let e = Expr::parse("max(baseM, baseK) // 2 ** 2 == 8 && -baseM < 0", &names()).unwrap();
        assert!(e.holds(&cfg(32, 4, "x")));
    }

    #[test]
    fn hostile_or_wrong_input_is_an_error() {
        assert!(Expr::parse("foo < 3", &names()).unwrap_err().contains("unknown parameter 'foo'"));
        assert!(Expr::parse("baseM = 3", &names()).is_err());
        assert!(Expr::parse("baseM <", &names()).is_err());
        assert!(Expr::parse("system('rm')", &names()).unwrap_err().contains("unknown function"));
        let deep = "(".repeat(10_000) + "1" + &")".repeat(10_000);
        assert!(Expr::parse(&deep, &names()).is_err());
        assert!(Expr::parse("'abc", &names()).is_err());
    }
}
