//! Bounds-checked encoding primitives: LEB128 varints, zigzag for signed values, and
//! length-prefixed byte strings.

use crate::{FormatError, Result};

/// Appends encoded values to a byte vector.
#[derive(Default, Debug, Clone)]
pub struct ByteWriter {
    pub buffer: Vec<u8>,
}

impl ByteWriter {
    pub fn new() -> ByteWriter {
        ByteWriter::default()
    }

    #[inline]
    pub fn u64(&mut self, mut value: u64) {
        if value < 0x80 {
            self.buffer.push(value as u8);
            return;
        }
        // Built on the stack and appended once: one capacity check, not one a byte (a
        // column of a million random offsets is written in a few milliseconds).
        let mut bytes = [0u8; 10];
        let mut length = 0;
        while value >= 0x80 {
            bytes[length] = (value as u8) | 0x80;
            value >>= 7;
            length += 1;
        }
        bytes[length] = value as u8;
        self.buffer.extend_from_slice(&bytes[..=length]);
    }

    pub fn i64(&mut self, value: i64) {
        self.u64(zigzag(value));
    }

    /// An f64 as its 8 bytes (little-endian): a varint of its bits would take 9 or 10, since
    /// the exponent sits in the high bits.
    pub fn f64(&mut self, value: f64) {
        self.buffer.extend_from_slice(&value.to_le_bytes());
    }

    pub fn bytes(&mut self, value: &[u8]) {
        self.u64(value.len() as u64);
        self.buffer.extend_from_slice(value);
    }

    pub fn str(&mut self, value: &str) {
        self.bytes(value.as_bytes());
    }

    pub fn into_inner(self) -> Vec<u8> {
        self.buffer
    }
}

pub fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

pub fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

/// Reads encoded values from a byte slice; every read checks the remaining length.
#[derive(Debug, Clone)]
pub struct ByteReader<'a> {
    data: &'a [u8],
    position: usize,
    /// Names what is being read, for error messages ("section FILES").
    context: &'a str,
}

impl<'a> ByteReader<'a> {
    pub fn new(data: &'a [u8], context: &'a str) -> ByteReader<'a> {
        ByteReader {
            data,
            position: 0,
            context,
        }
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.position
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    fn truncated(&self) -> FormatError {
        FormatError::Truncated(format!(
            "{} ends early at byte {}",
            self.context, self.position
        ))
    }

    pub fn corrupt(&self, what: &str) -> FormatError {
        FormatError::Corrupt(format!(
            "{}: {} (at byte {})",
            self.context, what, self.position
        ))
    }

    pub fn u64(&mut self) -> Result<u64> {
        let mut value: u64 = 0;
        for shift in (0..64).step_by(7) {
            let byte = *self
                .data
                .get(self.position)
                .ok_or_else(|| self.truncated())?;
            self.position += 1;
            if shift == 63 && byte > 1 {
                return Err(self.corrupt("varint overflows 64 bits"));
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(self.corrupt("varint longer than 10 bytes"))
    }

    pub fn i64(&mut self) -> Result<i64> {
        Ok(unzigzag(self.u64()?))
    }

    pub fn u32(&mut self) -> Result<u32> {
        let value = self.u64()?;
        u32::try_from(value).map_err(|_| self.corrupt("value does not fit 32 bits"))
    }

    pub fn i32(&mut self) -> Result<i32> {
        let value = self.i64()?;
        i32::try_from(value).map_err(|_| self.corrupt("value does not fit 32 bits"))
    }

    /// A count of items that each take at least `min_item_bytes` bytes: checked against the
    /// remaining input, so a corrupt count can never make the caller allocate too much.
    pub fn count(&mut self, min_item_bytes: usize) -> Result<usize> {
        let count = self.u64()?;
        let limit = self.remaining() / min_item_bytes.max(1);
        if count > limit as u64 {
            return Err(self.corrupt(&format!(
                "count {count} exceeds what the remaining {} bytes can hold",
                self.remaining()
            )));
        }
        Ok(count as usize)
    }

    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let length = self.u64()?;
        if length > self.remaining() as u64 {
            return Err(self.truncated());
        }
        let start = self.position;
        self.position += length as usize;
        Ok(&self.data[start..self.position])
    }

    pub fn string(&mut self) -> Result<String> {
        let raw = self.bytes()?;
        String::from_utf8(raw.to_vec()).map_err(|_| self.corrupt("string is not UTF-8"))
    }

    pub fn f64(&mut self) -> Result<f64> {
        let bytes = self.fixed(8)?;
        Ok(f64::from_le_bytes(bytes.try_into().expect("eight bytes")))
    }

    pub fn fixed(&mut self, length: usize) -> Result<&'a [u8]> {
        if length > self.remaining() {
            return Err(self.truncated());
        }
        let start = self.position;
        self.position += length;
        Ok(&self.data[start..self.position])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn roundtrip(values in proptest::collection::vec(any::<i64>(), 0..50), blob in proptest::collection::vec(any::<u8>(), 0..40)) {
            let mut writer = ByteWriter::new();
            for value in &values { writer.i64(*value); writer.u64(*value as u64); }
            writer.bytes(&blob);
            let data = writer.into_inner();
            let mut reader = ByteReader::new(&data, "test");
            for value in &values {
                prop_assert_eq!(reader.i64().unwrap(), *value);
                prop_assert_eq!(reader.u64().unwrap(), *value as u64);
            }
            prop_assert_eq!(reader.bytes().unwrap(), &blob[..]);
            prop_assert!(reader.is_empty());
        }

        #[test]
        fn garbage_never_panics(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut reader = ByteReader::new(&data, "garbage");
            while reader.u64().is_ok() {}
            let mut reader = ByteReader::new(&data, "garbage");
            let _ = reader.count(8);
            let _ = reader.bytes();
        }
    }

    #[test]
    fn count_is_bounded_by_input() {
        let mut writer = ByteWriter::new();
        writer.u64(1 << 40);
        let data = writer.into_inner();
        let error = ByteReader::new(&data, "x").count(1).unwrap_err();
        assert!(error.to_string().contains("exceeds"), "{error}");
    }
}
