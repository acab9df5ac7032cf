//! The rule by which a calling context's offsets jitter: its jumps (the nonzero offset
//! steps) take a few values close to one another in no period a loop could hold.
//!
//! HDF5 allocates an object header of each dataset it creates among the data, so a program
//! that writes a dataset per step (IOR's HDF5 backend, VPIC-IO, a checkpoint per step)
//! jumps from one step's data to the next by the other ranks' blocks, plus 2 KiB whenever
//! a metadata block was allocated in between: 196,608 or 198,656 bytes, in no period (the
//! headers' sizes and HDF5's free-space reuse decide). Offsets steps kept in the keys made
//! every such step a loop of its own (IOR, 100 segments: 29 KB of trace, 9 KB at 10).
//! Those jumps go to the stream's column instead (a couple of bits each, packed), and the
//! steps fold as one loop.
//!
//! Jumps are grouped in bands of values within 1/16 of the band's first (a few bands per
//! site, the least recently used replaced): a strided pattern's row, plane and cell jumps
//! fall in bands of their own, each with one value. Within a band, a value is expected
//! when it repeats the one a period back, the period learnt as sizes' is
//! ([`WanderingSizes`]: the distance to the value's last occurrence), so a regular cycle of
//! close jumps (cells placed block-tridiagonally, a few jumps a step) is learnt and stays
//! in the keys; the band jitters once 8 of its last 64 values were unexpected, and stops
//! after 64 expected in a row. Consecutive accesses (step 0) never jitter.

use crate::WanderingSizes;

/// Per calling context: the bands of its jumps. Encoding only (the trace builder's), so it
/// may be larger than the preload library's per-thread rules; a few hundred bytes a band.
#[derive(Clone, Debug, Default)]
pub struct JitterSteps {
    bands: Vec<Band>,
    /// Jumps taken, to order the bands by last use.
    taken: u64,
}

#[derive(Clone, Debug)]
struct Band {
    anchor: i64,
    values: WanderingSizes,
    used: u64,
}

impl JitterSteps {
    /// Bands kept per context.
    pub const BANDS: usize = 4;

    fn fits(anchor: i64, step: i64) -> bool {
        (anchor > 0) == (step > 0) && anchor.abs_diff(step) <= anchor.unsigned_abs() / 16
    }

    /// Takes the next offset step; whether it jitters (its band's values do now).
    pub fn step(&mut self, step: i64) -> bool {
        if step == 0 {
            return false;
        }
        self.taken += 1;
        let index = match self
            .bands
            .iter()
            .position(|band| Self::fits(band.anchor, step))
        {
            Some(index) => index,
            None => {
                // A band of its own: a free one, else the least recently used.
                let fresh = Band {
                    anchor: step,
                    values: WanderingSizes::default(),
                    used: 0,
                };
                if self.bands.len() < Self::BANDS {
                    self.bands.push(fresh);
                    self.bands.len() - 1
                } else {
                    let (index, _) = self
                        .bands
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, band)| band.used)
                        .expect("BANDS > 0");
                    self.bands[index] = fresh;
                    index
                }
            }
        };
        let band = &mut self.bands[index];
        band.used = self.taken;
        band.values.step(step as u64)
    }

    /// Takes `times` more repetitions of `step`'s band's cycle (a loop's repetitions
    /// folded as a block), each expected.
    pub fn repeat(&mut self, step: i64, times: u64) {
        if step == 0 {
            return;
        }
        if let Some(band) = self
            .bands
            .iter_mut()
            .find(|band| Self::fits(band.anchor, step))
        {
            band.values.repeat(times);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::JitterSteps;

    fn jittering(steps: &[i64]) -> Vec<bool> {
        let mut rule = JitterSteps::default();
        steps.iter().map(|step| rule.step(*step)).collect()
    }

    #[test]
    fn hdf5_s_metadata_blocks_jitter() {
        // The first data write of each of IOR's HDF5 segments, rank 0 of 4 (-b 64k):
        // the other ranks' blocks, and 2 KiB where a metadata block came in between.
        let (a, b) = (196_608, 198_656);
        let gaps = [3, 5, 5, 4, 6, 6, 3, 5, 6, 6, 5, 6, 6];
        let mut steps = Vec::new();
        for gap in gaps.iter().cycle().take(40) {
            steps.extend(std::iter::repeat_n(a, gap - 1));
            steps.push(b);
        }
        let jitter = jittering(&steps);
        let from = jitter.iter().position(|j| *j).expect("jitters");
        assert!(from < 40, "from {from}");
        assert!(jitter[from..].iter().all(|j| *j));
        // Consecutive writes between the jumps never do.
        let mut rule = JitterSteps::default();
        for step in &steps {
            rule.step(*step);
            assert!(!rule.step(0));
        }
    }

    #[test]
    fn regular_jumps_stay_in_the_keys() {
        // A cycle of close jumps (four cells a step, each a layer on and a column or row
        // aside), rows and planes of their own bands, and one jump that differs once.
        let cycle = [163_840 + 320, 163_840 - 960, 163_840 + 320, 163_840 + 5_440];
        let mut steps = Vec::new();
        for step in 0..500 {
            for (cell, jump) in cycle.iter().enumerate() {
                for row in 0..8 {
                    steps.push(if row == 0 { *jump } else { 320 });
                }
                if cell == 2 {
                    steps.push(5_440);
                }
            }
            if step == 250 {
                steps.push(163_840 + 640);
            }
        }
        assert!(jittering(&steps).iter().all(|j| !j));
    }
}
