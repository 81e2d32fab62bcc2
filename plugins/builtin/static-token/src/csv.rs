//! CSV records as Go's encoding/csv `Reader` reads them with kube's settings
//! (`FieldsPerRecord = -1`, no comment character, no lazy quotes, leading
//! spaces kept): RFC 4180 quoting with `""` escapes and quoted newlines,
//! `\r\n` read as `\n`, blank lines skipped, and Go's errors for stray quotes.

use std::fmt;

/// A syntax error, formatted like Go's `csv.ParseError`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    start_line: usize,
    line: usize,
    column: usize,
    bare: bool,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.bare {
            "bare \" in non-quoted-field"
        } else {
            "extraneous or missing \" in quoted-field"
        };
        if self.start_line != self.line {
            write!(f, "record on line {}; ", self.start_line)?;
        }
        write!(
            f,
            "parse error on line {}, column {}: {what}",
            self.line, self.column
        )
    }
}

/// Every record of `text`, each a list of fields.
pub fn records(text: &str) -> Result<Vec<Vec<String>>, ParseError> {
    let mut lines = Lines {
        rest: text,
        number: 0,
    };
    let mut out = Vec::new();
    while let Some(line) = lines.next_line() {
        if line != "\n" {
            out.push(Record::new(line, &mut lines).parse()?);
        }
    }
    Ok(out)
}

/// The input's lines, each with its `\n` (`\r\n` → `\n`; a last line without
/// newline loses a trailing `\r`), counted from 1.
struct Lines<'a> {
    rest: &'a str,
    number: usize,
}

impl Lines<'_> {
    fn next_line(&mut self) -> Option<String> {
        if self.rest.is_empty() {
            return None;
        }
        self.number += 1;
        let end = self.rest.find('\n').map_or(self.rest.len(), |i| i + 1);
        let (line, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(match line.strip_suffix("\r\n") {
            Some(body) => format!("{body}\n"),
            None if !line.ends_with('\n') => line.strip_suffix('\r').unwrap_or(line).to_string(),
            None => line.to_string(),
        })
    }
}

/// The parse of one record, which may span lines inside quotes.
struct Record<'l, 'a> {
    lines: &'l mut Lines<'a>,
    start_line: usize,
    line: String,
    offset: usize,
    column: usize,
    fields: Vec<String>,
}

/// What follows a field.
enum Next {
    Field,
    End,
}

impl<'l, 'a> Record<'l, 'a> {
    fn new(line: String, lines: &'l mut Lines<'a>) -> Self {
        let start_line = lines.number;
        Record {
            lines,
            start_line,
            line,
            offset: 0,
            column: 1,
            fields: Vec::new(),
        }
    }

    fn parse(mut self) -> Result<Vec<String>, ParseError> {
        loop {
            let next = if self.line[self.offset..].starts_with('"') {
                self.quoted()?
            } else {
                self.plain()?
            };
            if let Next::End = next {
                return Ok(self.fields);
            }
        }
    }

    fn error(&self, column: usize, bare: bool) -> ParseError {
        ParseError {
            start_line: self.start_line,
            line: self.lines.number,
            column,
            bare,
        }
    }

    /// A field without quotes: up to the next comma or the end of the line.
    fn plain(&mut self) -> Result<Next, ParseError> {
        let rest = &self.line[self.offset..];
        let comma = rest.find(',');
        let field = match comma {
            Some(i) => &rest[..i],
            None => rest.strip_suffix('\n').unwrap_or(rest),
        };
        if let Some(j) = field.find('"') {
            return Err(self.error(self.column + j, true));
        }
        self.fields.push(field.to_string());
        let Some(i) = comma else {
            return Ok(Next::End);
        };
        self.offset += i + 1;
        self.column += i + 1;
        Ok(Next::Field)
    }

    /// A field in quotes, which may contain commas, `""` and newlines.
    fn quoted(&mut self) -> Result<Next, ParseError> {
        self.offset += 1;
        self.column += 1;
        let mut field = String::new();
        loop {
            let rest = &self.line[self.offset..];
            if let Some(i) = rest.find('"') {
                field.push_str(&rest[..i]);
                self.offset += i + 1;
                self.column += i + 1;
                let after = &self.line[self.offset..];
                if after.starts_with('"') {
                    field.push('"');
                    self.offset += 1;
                    self.column += 1;
                } else if after.starts_with(',') || after.is_empty() || after == "\n" {
                    self.fields.push(field);
                    return Ok(self.after_closing_quote());
                } else {
                    return Err(self.error(self.column - 1, false));
                }
            } else if !rest.is_empty() {
                field.push_str(rest);
                self.next_line();
            } else {
                return Err(self.error(self.column, false));
            }
        }
    }

    /// After `"`: a comma continues the record, the end of the line ends it.
    fn after_closing_quote(&mut self) -> Next {
        if self.line[self.offset..].starts_with(',') {
            self.offset += 1;
            self.column += 1;
            Next::Field
        } else {
            Next::End
        }
    }

    /// Continues a quoted field on the next line ("" at the end of input).
    fn next_line(&mut self) {
        self.column += self.line.len() - self.offset;
        self.line = self.lines.next_line().unwrap_or_default();
        self.offset = 0;
        if !self.line.is_empty() {
            self.column = 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Vec<Vec<String>> {
        records(text).unwrap()
    }

    #[test]
    fn splits_plain_records_and_skips_blank_lines() {
        assert_eq!(
            ok("a,b,c\n\n d ,e\r\nf"),
            vec![vec!["a", "b", "c"], vec![" d ", "e"], vec!["f"]]
        );
        assert_eq!(ok("a,,\n"), vec![vec!["a", "", ""]]);
        assert_eq!(ok("x\r"), vec![vec!["x"]]);
        assert!(ok("").is_empty());
        assert_eq!(ok("#not,a,comment"), vec![vec!["#not", "a", "comment"]]);
    }

    #[test]
    fn reads_quoted_fields_with_commas_escapes_and_newlines() {
        assert_eq!(
            ok("t,u,\"1\",\"g1,g2\"\n"),
            vec![vec!["t", "u", "1", "g1,g2"]]
        );
        assert_eq!(ok("\"a \"\"b\"\"\",c"), vec![vec!["a \"b\"", "c"]]);
        assert_eq!(ok("\"two\r\nlines\",x\n"), vec![vec!["two\nlines", "x"]]);
        assert_eq!(ok("\"\""), vec![vec![""]]);
    }

    #[test]
    fn reports_go_style_quote_errors() {
        let e = records("ok,line\na,b\"c\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "parse error on line 2, column 4: bare \" in non-quoted-field"
        );
        let e = records("\"a\"b,c").unwrap_err();
        assert_eq!(
            e.to_string(),
            "parse error on line 1, column 3: extraneous or missing \" in quoted-field"
        );
        let e = records("x,\"open\nstill open").unwrap_err();
        assert_eq!(
            e.to_string(),
            "record on line 1; parse error on line 2, column 11: extraneous or missing \" in quoted-field"
        );
    }
}
