//! Just enough of Python's `marshal` format to read what `pstats` writes
//! (`python -m cProfile -o run.prof`): a dict of tuples of strings, ints
//! and floats, with the back-references marshal version 3 and later use
//! for repeated strings. Code objects and anything else a profile never
//! holds are an error, as is anything cut short.

/// A value read from a marshal stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    /// Tuples, lists, sets and frozensets.
    Seq(Vec<Value>),
    Dict(Vec<(Value, Value)>),
}

impl Value {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// An int or a float, as a float.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }
}

const FLAG_REF: u8 = 0x80;
/// Nesting deeper than any profile has: a guard against hostile input.
const MAX_DEPTH: usize = 64;

/// Reads one value from the start of `bytes`.
pub fn read(bytes: &[u8]) -> Result<Value, String> {
    let mut reader = Reader { bytes, at: 0, refs: Vec::new() };
    reader.value(0)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Values flagged for reference, in the order they began.
    refs: Vec<Option<Value>>,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len()).ok_or("the file ends in the middle of a value")?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn byte(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("four bytes")))
    }

    fn i32(&mut self) -> Result<i32, String> {
        Ok(self.u32()? as i32)
    }

    /// A length (never negative), bounded by what is left to read.
    fn len(&mut self) -> Result<usize, String> {
        let n = self.i32()?;
        usize::try_from(n).ok().filter(|n| *n <= self.bytes.len()).ok_or_else(|| format!("bad length {n}"))
    }

    fn text(&mut self, n: usize) -> Result<String, String> {
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| "a string that is not UTF-8".to_string())
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err("values nested too deeply".into());
        }
        let code = self.byte()?;
        let slot = (code & FLAG_REF != 0).then(|| {
            self.refs.push(None);
            self.refs.len() - 1
        });
        let value = match code & !FLAG_REF {
            b'N' => Value::None,
            b'F' => Value::Bool(false),
            b'T' => Value::Bool(true),
            b'i' => Value::Int(self.i32()?.into()),
            b'l' => {
                // A long: a signed count of 15-bit digits, least significant first.
                let n = self.i32()?;
                let digits = n.unsigned_abs() as usize;
                let mut value: i128 = 0;
                for i in 0..digits {
                    let d = u16::from_le_bytes(self.take(2)?.try_into().expect("two bytes")) as i128;
                    if i < 8 {
                        value |= d << (15 * i);
                    }
                }
                let value = if n < 0 { -value } else { value };
                Value::Int(i64::try_from(value).unwrap_or(if n < 0 { i64::MIN } else { i64::MAX }))
            }
            b'g' => Value::Float(f64::from_le_bytes(self.take(8)?.try_into().expect("eight bytes"))),
            b'f' => {
                let n = self.byte()? as usize;
                let text = self.text(n)?;
                Value::Float(text.parse().map_err(|_| format!("bad float {text:?}"))?)
            }
            b's' => {
                let n = self.len()?;
                Value::Bytes(self.take(n)?.to_vec())
            }
            b'u' | b't' | b'a' | b'A' => {
                let n = self.len()?;
                Value::Str(self.text(n)?)
            }
            b'z' | b'Z' => {
                let n = self.byte()? as usize;
                Value::Str(self.text(n)?)
            }
            b'(' | b'[' | b'<' | b'>' => {
                let n = self.len()?;
                Value::Seq((0..n).map(|_| self.value(depth + 1)).collect::<Result<_, _>>()?)
            }
            b')' => {
                let n = self.byte()? as usize;
                Value::Seq((0..n).map(|_| self.value(depth + 1)).collect::<Result<_, _>>()?)
            }
            b'{' => {
                let mut entries = Vec::new();
                loop {
                    if self.bytes.get(self.at) == Some(&b'0') {
                        self.at += 1;
                        break;
                    }
                    let key = self.value(depth + 1)?;
                    let value = self.value(depth + 1)?;
                    entries.push((key, value));
                }
                Value::Dict(entries)
            }
            b'r' => {
                let index = self.u32()? as usize;
                return self.refs.get(index).cloned().flatten().ok_or_else(|| format!("a reference to value {index}, not read yet"));
            }
            other => return Err(format!("a value of marshal type {:?}, which no profile holds", other as char)),
        };
        if let Some(slot) = slot {
            self.refs[slot] = Some(value.clone());
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_pstats_writes() {
        // marshal.dumps({("a.py", 3, "f"): (1, 2, 0.5, 1.5, {})}) from CPython 3.11, with a
        // back-reference for the repeated string.
        let mut bytes = vec![b'{', b')' | FLAG_REF, 3, b'Z' | FLAG_REF, 4];
        bytes.extend(b"a.py");
        bytes.extend([b'i', 3, 0, 0, 0, b'Z', 1, b'f']);
        bytes.extend([b')', 5, b'i', 1, 0, 0, 0, b'i', 2, 0, 0, 0, b'g']);
        bytes.extend(0.5f64.to_le_bytes());
        bytes.push(b'g');
        bytes.extend(1.5f64.to_le_bytes());
        bytes.extend([b'{', b'0', b'r', 1, 0, 0, 0, b'0']);
        // (The last entry's key is a reference to "a.py", its value missing: cut short.)
        assert!(read(&bytes).is_err());
        bytes.truncate(bytes.len() - 6);
        bytes.push(b'0');
        let value = read(&bytes).unwrap();
        let Value::Dict(entries) = value else { panic!("{value:?}") };
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].0, Value::Seq(vec![Value::Str("a.py".into()), Value::Int(3), Value::Str("f".into())]));
        let Value::Seq(stats) = &entries[0].1 else { panic!() };
        assert_eq!(stats[2], Value::Float(0.5));
        assert_eq!(stats[4], Value::Dict(Vec::new()));
    }

    #[test]
    fn longs_and_bad_input() {
        // 2**40 as a long: three 15-bit digits.
        let big = 1i64 << 40;
        let mut bytes = vec![b'l', 3, 0, 0, 0];
        for i in 0..3 {
            bytes.extend((((big >> (15 * i)) & 0x7fff) as u16).to_le_bytes());
        }
        assert_eq!(read(&bytes).unwrap(), Value::Int(big));
        assert!(read(b"").is_err());
        assert!(read(b"c").is_err(), "code objects are not read");
        assert!(read(&[b'(', 0xff, 0xff, 0xff, 0x7f]).is_err(), "a length past the end");
        assert!(read(&[b'r', 5, 0, 0, 0]).is_err());
    }
}
