//! Lexer and recursive-descent parser for the `labelSelector` query grammar,
//! reproducing k8s.io/apimachinery/pkg/labels/selector.go token by token so
//! that error messages match a real apiserver.

use std::collections::BTreeSet;

use super::label::{Operator, Requirement};
use super::validation::invalid;
use kube_rules::gofmt::quote as go_quote;
use kube_rules::qualified_name as qualified_name_errors;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Item {
    tok: Token,
    lit: String,
}

const BINARY_OPERATORS: &str = "in, notin, =, ==, !=, gt, lt";

fn literal_token(s: &str) -> Option<Token> {
    Some(match s {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    /// The next byte, or 0 at the end (like kube's lexer).
    fn read(&mut self) -> u8 {
        match self.s.get(self.pos) {
            Some(b) => {
                self.pos += 1;
                *b
            }
            None => 0,
        }
    }

    fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    fn text(&self, start: usize, end: usize) -> String {
        String::from_utf8_lossy(&self.s[start..end]).into_owned()
    }

    fn lex(&mut self) -> Item {
        let mut c = self.read();
        while is_whitespace(c) {
            c = self.read();
        }
        if c == 0 {
            return Item {
                tok: Token::EndOfString,
                lit: String::new(),
            };
        }
        self.unread();
        if is_special(c) {
            self.scan_special()
        } else {
            self.scan_identifier()
        }
    }

    fn scan_identifier(&mut self) -> Item {
        let start = self.pos;
        let mut end = start;
        loop {
            let c = self.read();
            if c == 0 {
                break;
            }
            if is_special(c) || is_whitespace(c) {
                self.unread();
                break;
            }
            end = self.pos;
        }
        let lit = self.text(start, end);
        let tok = literal_token(&lit).unwrap_or(Token::Identifier);
        Item { tok, lit }
    }

    fn scan_special(&mut self) -> Item {
        let start = self.pos;
        let mut last: Option<(Token, usize)> = None;
        loop {
            let c = self.read();
            if c == 0 {
                break;
            }
            if !is_special(c) {
                self.unread();
                break;
            }
            match literal_token(&self.text(start, self.pos)) {
                Some(t) => last = Some((t, self.pos)),
                None if last.is_some() => {
                    self.unread();
                    break;
                }
                None => {}
            }
        }
        match last {
            Some((tok, end)) => Item {
                tok,
                lit: self.text(start, end),
            },
            None => Item {
                tok: Token::Error,
                lit: format!(
                    "error expected: keyword found '{}'",
                    self.text(start, self.pos)
                ),
            },
        }
    }
}

struct Parser {
    items: Vec<Item>,
    pos: usize,
}

impl Parser {
    fn new(input: &str) -> Self {
        let mut lexer = Lexer {
            s: input.as_bytes(),
            pos: 0,
        };
        let mut items = Vec::new();
        loop {
            let item = lexer.lex();
            let done = item.tok == Token::EndOfString;
            items.push(item);
            if done {
                break;
            }
        }
        Parser { items, pos: 0 }
    }

    fn peek(&self, ctx: Context) -> (Token, String) {
        let (tok, lit) = match self.items.get(self.pos) {
            Some(i) => (i.tok, i.lit.clone()),
            None => (Token::EndOfString, String::new()),
        };
        match (ctx, tok) {
            (Context::Values, Token::In | Token::NotIn) => (Token::Identifier, lit),
            _ => (tok, lit),
        }
    }

    fn next(&mut self, ctx: Context) -> (Token, String) {
        let item = self.peek(ctx);
        self.pos += 1;
        item
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (tok, lit) = self.peek(Context::Values);
            match tok {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self
                        .requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    if self.after_requirement()? {
                        return Ok(requirements);
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ))
                }
            }
        }
    }

    /// Consumes the separator after a requirement; true at end of input.
    fn after_requirement(&mut self) -> Result<bool, String> {
        let (t, l) = self.next(Context::Values);
        match t {
            Token::EndOfString => Ok(true),
            Token::Comma => {
                let (t2, l2) = self.peek(Context::Values);
                if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                    return Err(format!("found '{l2}', expected: identifier after ','"));
                }
                Ok(false)
            }
            _ => Err(format!("found '{l}', expected: ',' or 'end of string'")),
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let (key, unary) = self.key_and_inferred_operator()?;
        if let Some(op) = unary {
            return Requirement::new(&key, op, Vec::new());
        }
        let op = self.operator()?;
        let values = match op {
            Operator::In | Operator::NotIn => self.value_set()?,
            _ => self.exact_value()?,
        };
        Requirement::new(&key, op, values.into_iter().collect())
    }

    fn key_and_inferred_operator(&mut self) -> Result<(String, Option<Operator>), String> {
        let (mut tok, mut lit) = self.next(Context::Values);
        let mut op = None;
        if tok == Token::DoesNotExist {
            op = Some(Operator::DoesNotExist);
            (tok, lit) = self.next(Context::Values);
        }
        if tok != Token::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        let errs = qualified_name_errors(&lit);
        if !errs.is_empty() {
            return Err(invalid("<nil>", &go_quote(&lit), &errs.join("; ")));
        }
        let (next, _) = self.peek(Context::Values);
        if op.is_none() && matches!(next, Token::EndOfString | Token::Comma) {
            op = Some(Operator::Exists);
        }
        Ok((lit, op))
    }

    fn operator(&mut self) -> Result<Operator, String> {
        let (tok, lit) = self.next(Context::KeyAndOperator);
        Ok(match tok {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => return Err(format!("found '{lit}', expected: {BINARY_OPERATORS}")),
        })
    }

    /// `( v1, v2, ... )`; empty entries mean the empty-string value.
    fn value_set(&mut self) -> Result<BTreeSet<String>, String> {
        let (tok, lit) = self.next(Context::Values);
        if tok != Token::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.peek(Context::Values);
        match tok {
            Token::Identifier | Token::Comma => {
                let set = self.identifier_list()?;
                let (close, _) = self.next(Context::Values);
                if close != Token::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(set)
            }
            Token::ClosedPar => {
                self.next(Context::Values);
                Ok(BTreeSet::from([String::new()]))
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn identifier_list(&mut self) -> Result<BTreeSet<String>, String> {
        let mut set = BTreeSet::new();
        loop {
            let (tok, lit) = self.next(Context::Values);
            match tok {
                Token::Identifier => {
                    set.insert(lit);
                    let (t2, l2) = self.peek(Context::Values);
                    match t2 {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(set),
                        _ => return Err(format!("found '{l2}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    let (t2, _) = self.peek(Context::Values);
                    if t2 == Token::ClosedPar {
                        set.insert(String::new());
                        return Ok(set);
                    }
                    if t2 == Token::Comma {
                        self.next(Context::Values);
                        set.insert(String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    fn exact_value(&mut self) -> Result<BTreeSet<String>, String> {
        let (tok, _) = self.peek(Context::Values);
        if matches!(tok, Token::EndOfString | Token::Comma) {
            return Ok(BTreeSet::from([String::new()]));
        }
        let (tok, lit) = self.next(Context::Values);
        if tok == Token::Identifier {
            return Ok(BTreeSet::from([lit]));
        }
        Err(format!("found '{lit}', expected: identifier"))
    }
}

/// Parses a selector string into its requirements, in source order.
pub(crate) fn parse(input: &str) -> Result<Vec<Requirement>, String> {
    Parser::new(input).parse()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> String {
        parse(s).unwrap_err()
    }

    #[test]
    fn kube_parse_error_messages() {
        assert_eq!(
            err("a in"),
            "unable to parse requirement: found '' expected: '('"
        );
        assert_eq!(
            err("a b"),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert_eq!(err("a=b,"), "found '', expected: identifier after ','");
        assert_eq!(err("!a=b"), "found '=', expected: ',' or 'end of string'");
        assert_eq!(
            err("=a"),
            "found '=', expected: !, identifier, or 'end of string'"
        );
        assert_eq!(
            err("a in (x"),
            "unable to parse requirement: found '', expected: ',' or ')'"
        );
        assert_eq!(
            err("a in (=)"),
            "unable to parse requirement: found '=', expected: ',', ')' or identifier"
        );
        assert_eq!(
            err("!"),
            "unable to parse requirement: found '', expected: identifier"
        );
    }

    #[test]
    fn invalid_key_and_value_messages() {
        let e = err("app:monolith");
        assert!(e.starts_with(
            "unable to parse requirement: <nil>: Invalid value: \"app:monolith\": name part must consist"
        ));
        let e = err("a=-x");
        assert!(e.starts_with(
            "unable to parse requirement: values[0][a]: Invalid value: \"-x\": a valid label must be"
        ));
        assert_eq!(
            err("a>b"),
            "unable to parse requirement: values[0]: Invalid value: \"b\": \
             for 'Gt', 'Lt' operators, the value must be an integer"
        );
    }

    #[test]
    fn value_sets() {
        let r = parse("x in (foo,,baz),y,z notin ()").unwrap();
        assert_eq!(r[0].values(), ["", "baz", "foo"]);
        assert_eq!(r[1].operator(), Operator::Exists);
        assert_eq!(r[2].values(), [""]);
        let r = parse("in in (in, notin)").unwrap();
        assert_eq!(r[0].key(), "in");
        assert_eq!(r[0].values(), ["in", "notin"]);
        assert_eq!(parse("a=").unwrap()[0].values(), [""]);
    }
}
