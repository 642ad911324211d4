//! The `window=` attribute of `reduce-window` as the evaluator, the indexing analysis and
//! the emitters read it: the parser keeps it as raw text (`{size=1x3 stride=1x2
//! pad=0_0x1_1}`), and each of them needs the numbers with XLA's defaults filled in.

use crate::module::{AttrValue, Instruction};

/// One dimension of a window; fields the text leaves out have XLA's defaults (size,
/// stride and dilations 1, no padding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowDim {
    pub size: i64,
    pub stride: i64,
    pub pad_low: i64,
    pub pad_high: i64,
    /// `lhs_dilate`: holes between the operand's elements.
    pub base_dilation: i64,
    /// `rhs_dilate`: holes between the window's elements.
    pub window_dilation: i64,
}

impl Default for WindowDim {
    fn default() -> WindowDim {
        WindowDim {
            size: 1,
            stride: 1,
            pad_low: 0,
            pad_high: 0,
            base_dilation: 1,
            window_dilation: 1,
        }
    }
}

impl WindowDim {
    /// The operand coordinate that window position `w` of output coordinate `o` reads, or
    /// `None` where it lands on padding or between dilated elements of an operand
    /// dimension of `n` elements.
    pub fn source(&self, o: i64, w: i64, n: i64) -> Option<i64> {
        let padded = o * self.stride + w * self.window_dilation - self.pad_low;
        let b = self.base_dilation;
        (padded >= 0 && padded % b == 0 && padded / b < n).then_some(padded / b)
    }
}

/// The window of `instr` (a `reduce-window`): one entry per operand dimension. A rank-0
/// operand may omit the attribute.
pub fn window_of(instr: &Instruction) -> Result<Vec<WindowDim>, String> {
    match instr.attribute("window").map(|a| &a.value) {
        None => Ok(Vec::new()),
        Some(AttrValue::Raw(text)) => parse_window(text),
        Some(_) => Err("window= must be written as {size=.. stride=.. pad=..}".into()),
    }
}

/// Reads the text of a `window=` attribute as the parser keeps it (`{size=3x3 pad=1_1x1_1}`).
pub fn parse_window(text: &str) -> Result<Vec<WindowDim>, String> {
    let inner = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .ok_or_else(|| format!("cannot read window={text}"))?;
    let mut dims: Vec<WindowDim> = Vec::new();
    for item in inner.split_whitespace() {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| format!("cannot read '{item}' in window={text}"))?;
        let parts: Vec<&str> = value.split('x').collect();
        if dims.is_empty() {
            dims = vec![WindowDim::default(); parts.len()];
        } else if dims.len() != parts.len() {
            return Err(format!("window={text} gives its fields different ranks"));
        }
        let number = |s: &str| {
            s.parse::<i64>()
                .map_err(|_| format!("cannot read '{item}' in window={text}"))
        };
        for (dim, part) in dims.iter_mut().zip(&parts) {
            match key {
                "size" => dim.size = number(part)?,
                "stride" => dim.stride = number(part)?,
                "lhs_dilate" => dim.base_dilation = number(part)?,
                "rhs_dilate" => dim.window_dilation = number(part)?,
                "pad" => {
                    let (low, high) = part
                        .split_once('_')
                        .ok_or_else(|| format!("cannot read '{item}' in window={text}"))?;
                    dim.pad_low = number(low)?;
                    dim.pad_high = number(high)?;
                }
                "rhs_reversal" => {}
                _ => return Err(format!("unknown window field '{key}'")),
            }
        }
    }
    for (i, d) in dims.iter().enumerate() {
        if d.size <= 0 || d.stride <= 0 || d.base_dilation <= 0 || d.window_dilation <= 0 {
            return Err(format!(
                "window dimension {i} needs a positive size, stride and dilations"
            ));
        }
    }
    Ok(dims)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_parse_with_defaults() {
        let dims = parse_window("{size=1x3 stride=1x2 pad=0_0x1_1}").unwrap();
        assert_eq!(dims.len(), 2);
        assert_eq!(dims[0], WindowDim::default());
        assert_eq!(
            dims[1],
            WindowDim {
                size: 3,
                stride: 2,
                pad_low: 1,
                pad_high: 1,
                ..WindowDim::default()
            }
        );
        let dilated = parse_window("{size=2 lhs_dilate=3 rhs_dilate=2}").unwrap();
        assert_eq!(
            (dilated[0].base_dilation, dilated[0].window_dilation),
            (3, 2)
        );
        let mixed = parse_window("{size=3x1 stride=2x1 pad=1_1x0_0 lhs_dilate=1x2}").unwrap();
        assert_eq!(mixed.len(), 2);
        assert_eq!(
            (mixed[0].size, mixed[0].stride, mixed[0].pad_low),
            (3, 2, 1)
        );
        assert_eq!(mixed[1].base_dilation, 2);
        assert!(parse_window("{size=3x1 stride=2}").is_err());
        assert!(parse_window("{size=0}").is_err());
        assert!(parse_window("{frob=1}").is_err());
        assert!(parse_window("size=1").is_err());
    }

    #[test]
    fn sources_skip_padding_and_dilation_holes() {
        // size 3, stride 2, one element of padding on each side, operand of 4 elements.
        let w = parse_window("{size=3 stride=2 pad=1_1}").unwrap()[0];
        let reads: Vec<Option<i64>> = (0..3).map(|k| w.source(0, k, 4)).collect();
        assert_eq!(reads, [None, Some(0), Some(1)]);
        assert_eq!(w.source(2, 2, 4), None);
        // Base dilation 2: the operand sits at padded positions 0, 2, 4.
        let d = parse_window("{size=2 lhs_dilate=2}").unwrap()[0];
        let reads: Vec<Option<i64>> = (0..4).map(|o| d.source(o, 0, 3)).collect();
        assert_eq!(reads, [Some(0), None, Some(1), None]);
    }
}
