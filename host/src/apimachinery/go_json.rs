//! Go `encoding/json`'s syntax errors, worded as its scanner words them:
//! kube-apiserver quotes them in the 400s for malformed bodies and patches
//! (`invalid character 'n' looking for beginning of object key string`,
//! `unexpected end of JSON input`). A port of the scanner's states
//! (encoding/json/scanner.go), used only to name what serde refused.

/// Where the scanner is, as Go's `step` functions.
#[derive(Clone, Copy, PartialEq)]
enum State {
    BeginValue,
    BeginValueOrEmpty,
    BeginStringOrEmpty,
    BeginString,
    EndValue,
    EndTop,
    InString,
    InStringEsc,
    InStringEscU(u8),
    Neg,
    One,
    Zero,
    Dot,
    Dot0,
    E,
    ESign,
    E0,
    /// Inside a literal: the rest still expected, and the literal's name.
    Literal(&'static [u8], &'static str),
}

#[derive(Clone, Copy, PartialEq)]
enum Frame {
    ObjectKey,
    ObjectValue,
    Array,
}

/// Go's error for `bytes`, or None when they are valid JSON.
pub fn syntax_error(bytes: &[u8]) -> Option<String> {
    let mut scanner = Scanner {
        state: State::BeginValue,
        stack: Vec::new(),
    };
    for &c in bytes {
        if let Err(why) = scanner.step(c) {
            return Some(format!("invalid character {} {why}", quote_char(c)));
        }
    }
    (!scanner.complete()).then(|| "unexpected end of JSON input".into())
}

struct Scanner {
    state: State,
    stack: Vec<Frame>,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

impl Scanner {
    /// The input so far is one whole value (trailing space allowed).
    fn complete(&mut self) -> bool {
        if matches!(
            self.state,
            State::One | State::Zero | State::Dot0 | State::E0 | State::EndValue
        ) {
            self.state = if self.stack.is_empty() {
                State::EndTop
            } else {
                State::EndValue
            };
        }
        self.state == State::EndTop
    }

    fn step(&mut self, c: u8) -> Result<(), &'static str> {
        use State::*;
        match self.state {
            BeginValueOrEmpty if c == b']' => self.end_value_after_pop(),
            BeginValueOrEmpty | BeginValue => self.begin_value(c),
            BeginStringOrEmpty if c == b'}' => self.end_value_after_pop(),
            BeginStringOrEmpty | BeginString => self.begin_string(c),
            EndValue => self.end_value(c),
            EndTop if is_space(c) => Ok(()),
            EndTop => Err("after top-level value"),
            InString => self.in_string(c),
            InStringEsc => self.in_string_esc(c),
            InStringEscU(n) => self.in_string_esc_u(c, n),
            Neg => self.neg(c),
            One if c.is_ascii_digit() => Ok(()),
            One | Zero => self.after_integer(c),
            Dot if c.is_ascii_digit() => self.go(Dot0),
            Dot => Err("after decimal point in numeric literal"),
            Dot0 if c.is_ascii_digit() => Ok(()),
            Dot0 if c == b'e' || c == b'E' => self.go(E),
            Dot0 | E0 if c.is_ascii_digit() => Ok(()),
            Dot0 | E0 => self.end_value(c),
            E if c == b'+' || c == b'-' => self.go(ESign),
            E | ESign if c.is_ascii_digit() => self.go(E0),
            E | ESign => Err("in exponent of numeric literal"),
            Literal(rest, name) => self.literal(c, rest, name),
        }
    }

    fn go(&mut self, state: State) -> Result<(), &'static str> {
        self.state = state;
        Ok(())
    }

    fn begin_value(&mut self, c: u8) -> Result<(), &'static str> {
        use State::*;
        match c {
            c if is_space(c) => Ok(()),
            b'{' => {
                self.stack.push(Frame::ObjectKey);
                self.go(BeginStringOrEmpty)
            }
            b'[' => {
                self.stack.push(Frame::Array);
                self.go(BeginValueOrEmpty)
            }
            b'"' => self.go(InString),
            b'-' => self.go(Neg),
            b'0' => self.go(Zero),
            b'1'..=b'9' => self.go(One),
            b't' => self.go(Literal(b"rue", "true")),
            b'f' => self.go(Literal(b"alse", "false")),
            b'n' => self.go(Literal(b"ull", "null")),
            _ => Err("looking for beginning of value"),
        }
    }

    fn begin_string(&mut self, c: u8) -> Result<(), &'static str> {
        match c {
            c if is_space(c) => Ok(()),
            b'"' => self.go(State::InString),
            _ => Err("looking for beginning of object key string"),
        }
    }

    fn end_value_after_pop(&mut self) -> Result<(), &'static str> {
        self.stack.pop();
        self.state = if self.stack.is_empty() {
            State::EndTop
        } else {
            State::EndValue
        };
        Ok(())
    }

    fn end_value(&mut self, c: u8) -> Result<(), &'static str> {
        let Some(frame) = self.stack.last_mut() else {
            self.state = State::EndTop;
            return self.step(c);
        };
        if is_space(c) {
            self.state = State::EndValue;
            return Ok(());
        }
        match (*frame, c) {
            (Frame::ObjectKey, b':') => {
                *frame = Frame::ObjectValue;
                self.go(State::BeginValue)
            }
            (Frame::ObjectKey, _) => Err("after object key"),
            (Frame::ObjectValue, b',') => {
                *frame = Frame::ObjectKey;
                self.go(State::BeginString)
            }
            (Frame::ObjectValue, b'}') | (Frame::Array, b']') => self.end_value_after_pop(),
            (Frame::ObjectValue, _) => Err("after object key:value pair"),
            (Frame::Array, b',') => self.go(State::BeginValue),
            (Frame::Array, _) => Err("after array element"),
        }
    }

    fn in_string(&mut self, c: u8) -> Result<(), &'static str> {
        match c {
            b'"' => self.go(State::EndValue),
            b'\\' => self.go(State::InStringEsc),
            c if c < 0x20 => Err("in string literal"),
            _ => Ok(()),
        }
    }

    fn in_string_esc(&mut self, c: u8) -> Result<(), &'static str> {
        match c {
            b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => self.go(State::InString),
            b'u' => self.go(State::InStringEscU(4)),
            _ => Err("in string escape code"),
        }
    }

    fn in_string_esc_u(&mut self, c: u8, left: u8) -> Result<(), &'static str> {
        if !c.is_ascii_hexdigit() {
            return Err("in \\u hexadecimal character escape");
        }
        self.go(if left == 1 {
            State::InString
        } else {
            State::InStringEscU(left - 1)
        })
    }

    fn neg(&mut self, c: u8) -> Result<(), &'static str> {
        match c {
            b'0' => self.go(State::Zero),
            b'1'..=b'9' => self.go(State::One),
            _ => Err("in numeric literal"),
        }
    }

    fn after_integer(&mut self, c: u8) -> Result<(), &'static str> {
        match c {
            b'.' => self.go(State::Dot),
            b'e' | b'E' => self.go(State::E),
            _ => self.end_value(c),
        }
    }

    fn literal(
        &mut self,
        c: u8,
        rest: &'static [u8],
        name: &'static str,
    ) -> Result<(), &'static str> {
        let expecting = rest.first().copied().unwrap_or_default();
        if c != expecting {
            return Err(literal_error(name, expecting));
        }
        self.go(match &rest[1..] {
            [] => State::EndValue,
            more => State::Literal(more, name),
        })
    }
}

/// `in literal true (expecting 'r')` and the like.
fn literal_error(name: &str, expecting: u8) -> &'static str {
    match (name, expecting) {
        ("true", b'r') => "in literal true (expecting 'r')",
        ("true", b'u') => "in literal true (expecting 'u')",
        ("true", _) => "in literal true (expecting 'e')",
        ("false", b'a') => "in literal false (expecting 'a')",
        ("false", b'l') => "in literal false (expecting 'l')",
        ("false", b's') => "in literal false (expecting 's')",
        ("false", _) => "in literal false (expecting 'e')",
        ("null", b'u') => "in literal null (expecting 'u')",
        _ => "in literal null (expecting 'l')",
    }
}

/// Go's `quoteChar`: the byte as a rune, quoted as strconv.Quote would.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => "'\\''".into(),
        b'"' => "'\"'".into(),
        _ => format!("'{}'", go_quoted_rune(char::from(c))),
    }
}

fn go_quoted_rune(ch: char) -> String {
    match ch {
        '\x07' => "\\a".into(),
        '\x08' => "\\b".into(),
        '\x0c' => "\\f".into(),
        '\n' => "\\n".into(),
        '\r' => "\\r".into(),
        '\t' => "\\t".into(),
        '\x0b' => "\\v".into(),
        '\\' => "\\\\".into(),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => format!("\\x{:02x}", c as u32),
        c if (0x80..0xa1).contains(&(c as u32)) || c as u32 == 0xad => {
            format!("\\u{:04x}", c as u32)
        }
        c => c.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::syntax_error;

    /// Texts Go 1.23's encoding/json gives (and kube-apiserver 1.32 quotes,
    /// see tests/golden/answers/errors/).
    #[test]
    fn go_wording() {
        let cases: &[(&[u8], &str)] = &[
            (
                b"{not json",
                "invalid character 'n' looking for beginning of object key string",
            ),
            (b"", "unexpected end of JSON input"),
            (b"[", "unexpected end of JSON input"),
            (b"{\"a\" 1}", "invalid character '1' after object key"),
            (
                b"{\"a\":1 2}",
                "invalid character '2' after object key:value pair",
            ),
            (b"[1 2]", "invalid character '2' after array element"),
            (b"{} x", "invalid character 'x' after top-level value"),
            (b"tru", "unexpected end of JSON input"),
            (
                b"trxe",
                "invalid character 'x' in literal true (expecting 'u')",
            ),
            (
                b"nul!",
                "invalid character '!' in literal null (expecting 'l')",
            ),
            (
                b"fals3",
                "invalid character '3' in literal false (expecting 'e')",
            ),
            (
                b"1.x",
                "invalid character 'x' after decimal point in numeric literal",
            ),
            (b"-x", "invalid character 'x' in numeric literal"),
            (b"1e+", "unexpected end of JSON input"),
            (b"\"\\q\"", "invalid character 'q' in string escape code"),
            (
                b"\x81",
                "invalid character '\\u0081' looking for beginning of value",
            ),
            (b"\"a\nb\"", "invalid character '\\n' in string literal"),
        ];
        for (input, want) in cases {
            assert_eq!(
                syntax_error(input).as_deref(),
                Some(*want),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
        for valid in [
            &b"{}"[..],
            b" [1, -0.5e3, \"x\\u00e9\", true, null] ",
            b"0",
            b"null",
            b"\"s\"",
        ] {
            assert_eq!(
                syntax_error(valid),
                None,
                "{:?}",
                String::from_utf8_lossy(valid)
            );
        }
    }
}
