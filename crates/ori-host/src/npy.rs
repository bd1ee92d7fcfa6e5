//! NumPy `.npy` files: how `ori run` takes a kernel's input buffers and
//! gives back its outputs.
//!
//! A kernel author's inputs and the GPU's answers already live in NumPy
//! (PyTorch and CuPy arrays save to `.npy` in one call), so the host
//! backend reads and writes that format rather than a raw dump with its
//! shape and type kept somewhere else. Only what a GPU buffer can be is
//! accepted: little-endian, C order, a fixed-size element (`bf16` and the
//! fp8 types arrive as `uint16`/`uint8` bits, as NumPy has no such dtype).
//! Format: <https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html>.

/// An array: element type, shape and the raw little-endian bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyArray {
    /// NumPy's type string, little-endian or byte-sized (`<f4`, `<u2`, `|u1`).
    pub descr: String,
    /// Dimensions, outermost first (C order).
    pub shape: Vec<usize>,
    /// `shape.product() * element size` bytes.
    pub data: Vec<u8>,
}

/// The element size of a NumPy type string, if ori takes that type.
pub fn element_size(descr: &str) -> Option<usize> {
    let (order, kind) = descr.split_at(1.min(descr.len()));
    if !matches!(order, "<" | "|") {
        return None;
    }
    Some(match kind {
        "f2" | "i2" | "u2" => 2,
        "f4" | "i4" | "u4" => 4,
        "f8" | "i8" | "u8" => 8,
        "i1" | "u1" | "b1" => 1,
        _ => return None,
    })
}

/// The NumPy type string of a PTX-style name (`f32`, `bf16`, `u8`...) as
/// `ori run`'s `zeros:DTYPE:COUNT` spells it; NumPy's own strings (`<f4`)
/// pass through.
pub fn descr_of(dtype: &str) -> Option<&'static str> {
    Some(match dtype {
        "f16" | "<f2" => "<f2",
        "f32" | "<f4" => "<f4",
        "f64" | "<f8" => "<f8",
        "bf16" | "u16" | "<u2" => "<u2",
        "s8" | "i8" | "|i1" => "|i1",
        "u8" | "e4m3" | "e5m2" | "fp8" | "|u1" => "|u1",
        "s16" | "i16" | "<i2" => "<i2",
        "s32" | "i32" | "<i4" => "<i4",
        "u32" | "<u4" => "<u4",
        "s64" | "i64" | "<i8" => "<i8",
        "u64" | "<u8" => "<u8",
        "bool" | "|b1" => "|b1",
        _ => return None,
    })
}

impl NpyArray {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the array has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Parse a `.npy` file's bytes.
    pub fn parse(bytes: &[u8]) -> Result<NpyArray, String> {
        if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
            return Err("not a .npy file (no \\x93NUMPY magic)".into());
        }
        let (header_len, start) = match bytes[6] {
            1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10usize),
            2 | 3 if bytes.len() >= 12 => (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            ),
            v => return Err(format!(".npy format version {v} is not known")),
        };
        let end = start
            .checked_add(header_len)
            .filter(|e| *e <= bytes.len())
            .ok_or(".npy header runs past the end of the file")?;
        let header =
            std::str::from_utf8(&bytes[start..end]).map_err(|_| ".npy header is not text")?;
        let field = |key: &str| -> Result<&str, String> {
            let at = header
                .find(&format!("'{key}'"))
                .ok_or_else(|| format!(".npy header has no '{key}'"))?;
            let rest = header[at + key.len() + 2..].trim_start();
            Ok(rest.strip_prefix(':').unwrap_or(rest).trim_start())
        };
        let descr = field("descr")?;
        let descr = descr
            .strip_prefix('\'')
            .and_then(|d| d.split('\'').next())
            .ok_or(".npy descr is not a string")?
            .to_string();
        let size = element_size(&descr).ok_or_else(|| {
            format!("dtype '{descr}' is not supported (little-endian numbers and bytes only)")
        })?;
        if field("fortran_order")?.starts_with("True") {
            return Err("a Fortran-order array: save it in C order (np.ascontiguousarray)".into());
        }
        let shape = field("shape")?;
        let inner = shape
            .strip_prefix('(')
            .and_then(|s| s.split(')').next())
            .ok_or(".npy shape is not a tuple")?;
        let shape: Vec<usize> = inner
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse()
                    .map_err(|_| format!(".npy shape entry '{s}' is not a number"))
            })
            .collect::<Result<_, String>>()?;
        let want = shape
            .iter()
            .try_fold(size, |a, &d| a.checked_mul(d))
            .ok_or(".npy shape overflows")?;
        let data = &bytes[end..];
        if data.len() != want {
            return Err(format!(
                ".npy data is {} bytes; shape {shape:?} of {descr} needs {want}",
                data.len()
            ));
        }
        Ok(NpyArray {
            descr,
            shape,
            data: data.to_vec(),
        })
    }

    /// The `.npy` (version 1.0) bytes of this array.
    pub fn to_bytes(&self) -> Vec<u8> {
        let shape = match self.shape.len() {
            1 => format!("({},)", self.shape[0]),
            _ => format!(
                "({})",
                self.shape
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let mut header = format!(
            "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
            self.descr
        );
        // Pad with spaces so that the data starts 64-byte aligned, ending in '\n'.
        let total = 10 + header.len() + 1;
        header.push_str(&" ".repeat(total.next_multiple_of(64) - total));
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(&self.data);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `np.save` of `np.arange(6, dtype=np.float32).reshape(2, 3)`, byte for byte.
    const ARANGE_2X3_F4: &[u8] = b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }                                                          \n\x00\x00\x00\x00\x00\x00\x80?\x00\x00\x00@\x00\x00@@\x00\x00\x80@\x00\x00\xa0@";

    #[test]
    fn reads_and_writes_numpy_bytes() {
        let a = NpyArray::parse(ARANGE_2X3_F4).unwrap();
        assert_eq!(a.descr, "<f4");
        assert_eq!(a.shape, vec![2, 3]);
        assert_eq!(a.len(), 6);
        assert_eq!(&a.data[4..8], &1f32.to_le_bytes());
        assert_eq!(a.to_bytes(), ARANGE_2X3_F4);
        let v = NpyArray {
            descr: "<u2".into(),
            shape: vec![3],
            data: vec![1, 0, 2, 0, 3, 0],
        };
        assert_eq!(NpyArray::parse(&v.to_bytes()).unwrap(), v);
    }

    #[test]
    fn refuses_what_a_gpu_buffer_cannot_be() {
        let fortran = String::from_utf8_lossy(ARANGE_2X3_F4).replace("False", "True ");
        let e = NpyArray::parse(&fortran.bytes().collect::<Vec<_>>());
        assert!(e.is_err());
        let big_endian = ARANGE_2X3_F4
            .iter()
            .map(|&b| if b == b'<' { b'>' } else { b })
            .collect::<Vec<_>>();
        assert!(NpyArray::parse(&big_endian).unwrap_err().contains("'>f4'"));
        assert!(NpyArray::parse(&ARANGE_2X3_F4[..100]).is_err());
        assert!(NpyArray::parse(b"hello").is_err());
    }
}
