//! PROC, the section of process images: how each is written and read (docs/FORMAT.md,
//! "PROC").

use cairn_format::bytes::{unzigzag, zigzag, ByteReader, ByteWriter};

use super::groups::{
    self, Spread, COUNTERS, FIRST_GROUP, MEMBER_COUNTERS_ESTIMATED, MEMBER_OWN_COUNTERS,
    OWN_COUNTERS_ESTIMATED, OWN_TIMES_ESTIMATED,
};
use super::{Ending, FileInfo, Process, Unrecorded};
use crate::{Result, TraceError};

fn ending_code(ending: Ending) -> (u64, i64) {
    match ending {
        Ending::Exited => (1, 0),
        Ending::ExitCall(status) => (2, status as i64),
        Ending::Exec => (3, 0),
        Ending::Unknown => (0, 0),
    }
}

/// PROC: column by column (every process's pid, then every parent pid...), each value
/// against the previous process's (or the same process's start), strings as tables of
/// distinct values — so thousands of ranks of one command cost a few bytes each, mostly
/// their times (and nothing each when a precision level let their times share values).
pub(super) fn encode_processes(
    processes: &[Process],
    shared: &[bool],
    time_step: u64,
    out: &mut ByteWriter,
) {
    let step = time_step.max(1);
    out.u64(step);
    out.u64(processes.len() as u64);
    let mut previous = 0i64;
    for process in processes {
        out.i64(process.pid as i64 - previous);
        previous = process.pid as i64;
    }
    // Ranks share a launcher: against the previous process's parent, a constant column.
    let mut previous = 0i64;
    for process in processes {
        out.i64(process.parent_pid as i64 - previous);
        previous = process.parent_pid as i64;
    }
    // Version 12: the columns that are alike from rank to rank as runs (`column`).
    let optional_code = |value: Option<u32>| value.map_or(0, |value| value as u64 + 1);
    column(
        out,
        processes
            .iter()
            .map(|process| optional_code(process.parent)),
    );
    column(
        out,
        processes
            .iter()
            .map(|process| optional_code(process.exec_of)),
    );
    column(out, processes.iter().map(|process| process.forked as u64));
    encode_string_column(
        processes.iter().map(|process| process.executable.clone()),
        out,
    );
    encode_string_column(
        processes.iter().map(|process| process.arguments.join(&0u8)),
        out,
    );
    encode_string_column(
        processes
            .iter()
            .map(|process| process.working_directory.clone()),
        out,
    );
    encode_string_column(
        processes.iter().map(|process| process.hostname.clone()),
        out,
    );
    column(
        out,
        processes
            .iter()
            .map(|process| process.arguments.len() as u64),
    );
    // Version 11: which processes keep their own times, then those times, then each
    // group's statistics.
    let groups = groups::groups(processes, shared);
    column(out, groups.codes.iter().copied());
    let all = processes;
    let processes: Vec<&Process> = all
        .iter()
        .zip(&groups.codes)
        .filter(|(_, code)| **code < FIRST_GROUP)
        .map(|(process, _)| process)
        .collect();
    let processes = processes.as_slice();
    let mut previous = 0i64;
    for process in processes {
        let start = (process.start / step) as i64;
        out.i64(start - previous);
        previous = start;
    }
    // Ranks ending together (in `MPI_Finalize`) store ends against each other; processes
    // of similar lengths, lengths: whichever column is shorter. Likewise `main`: offsets
    // from the start, or times.
    let start = |process: &Process| process.start / step;
    let ends = |relative: bool| {
        processes.iter().map(move |process| {
            let length = process.end.saturating_sub(process.start) / step;
            (if relative {
                length
            } else {
                start(process) + length
            }) as i64
        })
    };
    delta_column(out, ends(false), ends(true));
    let mains = |relative: bool| {
        processes.iter().map(move |process| {
            process.main_start.map_or(0, |main| {
                let offset = main.saturating_sub(process.start) / step;
                (if relative {
                    offset
                } else {
                    start(process) + offset
                }) as i64
                    + 1
            })
        })
    };
    delta_column(out, mains(false), mains(true));
    out.u64(groups.members.len() as u64);
    for (members, counters_grouped) in groups.members.iter().zip(&groups.counters) {
        let times = |time: &dyn Fn(&Process) -> u64| {
            members
                .iter()
                .map(|member| time(&all[*member]) / step)
                .collect::<Vec<u64>>()
        };
        let main_known = all[members[0]].main_start.is_some();
        out.u64(main_known as u64);
        out.u64(*counters_grouped as u64);
        Spread::of(&times(&|process| process.start)).write(out);
        Spread::of(&times(&|process| process.end)).write(out);
        if main_known {
            // `main` after the start: what the loader and constructors took, alike from
            // rank to rank (the start's jitter is the launch's).
            Spread::of(&times(&|process| {
                process
                    .main_start
                    .map_or(0, |main| main.saturating_sub(process.start))
            }))
            .write(out);
        }
        if *counters_grouped {
            // Of the members close to the group's median (the others keep their own).
            let values: Vec<[u64; COUNTERS]> = members
                .iter()
                .filter(|member| groups.counters_grouped(**member))
                .map(|member| groups::counters(&all[*member]).unwrap_or_default())
                .collect();
            for column in 0..COUNTERS {
                let column: Vec<u64> = values.iter().map(|values| values[column]).collect();
                Spread::of(&column).write(out);
            }
        }
    }
    let processes = all;
    let endings = || processes.iter().map(|process| ending_code(process.ending));
    column(out, endings().map(|(code, _)| code));
    column(out, endings().map(|(_, status)| zigzag(status)));
    column(out, processes.iter().map(|process| process.threads as u64));
    column(out, processes.iter().map(|process| process.untraced_calls));
    // A group's counters are its statistics (above).
    column(
        out,
        differences(
            processes
                .iter()
                .enumerate()
                .filter(|(index, _)| !groups.counters_grouped(*index))
                .map(|(_, process)| process.runtime_events_dropped as i64),
        ),
    );
    column(
        out,
        differences(
            processes
                .iter()
                .map(|process| process.rank.map_or(-1, |rank| rank as i64)),
        ),
    );
    // The kernel's counters: which processes have them, then each counter column by
    // column as the difference from the previous such process's (ranks doing the same
    // thing differ by little).
    column(
        out,
        processes
            .iter()
            .map(|process| process.kernel_io.is_some() as u64),
    );
    let own: Vec<[u64; COUNTERS]> = processes
        .iter()
        .enumerate()
        .filter(|(index, _)| !groups.counters_grouped(*index))
        .filter_map(|(_, process)| groups::counters(process))
        .collect();
    for column in 0..6 {
        let mut previous = 0u64;
        for values in &own {
            out.i64(values[column].wrapping_sub(previous) as i64);
            previous = values[column];
        }
    }
    // What could not be recorded: which processes lost calls, then for each of those the
    // count, the error and when.
    column(
        out,
        processes
            .iter()
            .map(|process| process.unrecorded.is_some() as u64),
    );
    for lost in processes.iter().filter_map(|process| process.unrecorded) {
        out.u64(lost.calls);
        out.i64(lost.errno as i64);
        out.u64(lost.at);
    }
}

/// PROC version 7: a column of strings as the distinct values in order of first use, written
/// as a name table (so `node0001` … `node4096` is one numbered run, see `names`), then each
/// process's entry against the previous process's — thousands of ranks on hundreds of
/// numbered hosts cost a few bytes in all.
pub(super) fn encode_string_column(values: impl Iterator<Item = Vec<u8>>, out: &mut ByteWriter) {
    let mut distinct: Vec<FileInfo> = Vec::new();
    let mut entry_of: std::collections::HashMap<Vec<u8>, i64> = std::collections::HashMap::new();
    let entries: Vec<i64> = values
        .map(|value| {
            *entry_of.entry(value).or_insert_with_key(|value| {
                distinct.push(FileInfo {
                    path: value.clone(),
                    noise: None,
                });
                distinct.len() as i64 - 1
            })
        })
        .collect();
    crate::names::encode(&distinct, out);
    column(out, differences(entries.into_iter()));
}

/// Each value's difference from the one before (the first's from 0), zigzagged.
fn differences(values: impl Iterator<Item = i64>) -> impl Iterator<Item = u64> {
    let mut previous = 0i64;
    values.map(move |value| {
        let difference = value.wrapping_sub(previous);
        previous = value;
        zigzag(difference)
    })
}

/// The values [`differences`] made of them.
fn sums(differences: Vec<u64>) -> impl Iterator<Item = i64> {
    let mut previous = 0i64;
    differences.into_iter().map(move |difference| {
        previous = previous.wrapping_add(unzigzag(difference));
        previous
    })
}

/// PROC version 12: a column of one value a process as runs of equal values when that is
/// shorter — `u` the number of runs, then each run's `u` value and `u` length − 1 — else
/// `u` 0 and the values. A column the ranks of a job have alike (their thread count, their
/// ending, their rank's step of 1) costs a few bytes whatever the number of ranks.
fn column(out: &mut ByteWriter, values: impl Iterator<Item = u64>) {
    let values: Vec<u64> = values.collect();
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for value in &values {
        match runs.last_mut() {
            Some((last, length)) if last == value => *length += 1,
            _ => runs.push((*value, 1)),
        }
    }
    if runs.len() * 2 < values.len() {
        out.u64(runs.len() as u64);
        for (value, length) in runs {
            out.u64(value);
            out.u64(length - 1);
        }
    } else {
        out.u64(0);
        values.into_iter().for_each(|value| out.u64(value));
    }
}

/// Reads what [`column`] wrote: `count` values.
fn read_column(reader: &mut ByteReader, count: usize) -> Result<Vec<u64>> {
    let invalid = || TraceError::Invalid("section PROC: column of the wrong length".into());
    let runs = reader.u64()?;
    if runs == 0 {
        return Ok((0..count)
            .map(|_| reader.u64())
            .collect::<std::result::Result<_, _>>()?);
    }
    if runs > count as u64 {
        return Err(invalid());
    }
    let mut values = Vec::with_capacity(count);
    for _ in 0..runs {
        let value = reader.u64()?;
        // A run of `length + 1` values fits in what is left.
        let length = reader.u64()?;
        if length >= (count - values.len()) as u64 {
            return Err(invalid());
        }
        values.resize(values.len() + length as usize + 1, value);
    }
    if values.len() != count {
        return Err(invalid());
    }
    Ok(values)
}

/// Reads what [`encode_string_column`] wrote: `count` values.
pub(super) fn decode_string_column(reader: &mut ByteReader, count: usize) -> Result<Vec<Vec<u8>>> {
    let distinct = crate::names::decode(reader)?;
    sums(read_column(reader, count)?)
        .map(|entry| {
            usize::try_from(entry)
                .ok()
                .and_then(|entry| distinct.get(entry))
                .map(|value| value.path.clone())
                .ok_or_else(|| TraceError::Invalid("section PROC: string out of range".into()))
        })
        .collect()
}

/// Writes whichever of two columns takes fewer bytes as differences between consecutive
/// values: `u` 0 for `absolute`, 1 for `relative`, then the differences.
fn delta_column(
    out: &mut ByteWriter,
    absolute: impl Iterator<Item = i64> + Clone,
    relative: impl Iterator<Item = i64> + Clone,
) {
    let differences = |column: &mut dyn Iterator<Item = i64>| {
        let mut previous = 0i64;
        column
            .map(|value| {
                let difference = value.wrapping_sub(previous);
                previous = value;
                difference
            })
            .collect::<Vec<i64>>()
    };
    let (absolute, relative) = (
        differences(&mut absolute.clone()),
        differences(&mut relative.clone()),
    );
    let length = |column: &[i64]| {
        let mut writer = ByteWriter::new();
        column.iter().for_each(|value| writer.i64(*value));
        writer.into_inner()
    };
    let (absolute, relative) = (length(&absolute), length(&relative));
    let relative_is_shorter = relative.len() < absolute.len();
    out.u64(relative_is_shorter as u64);
    out.buffer.extend_from_slice(if relative_is_shorter {
        &relative
    } else {
        &absolute
    });
}

/// Reads what [`delta_column`] wrote into the processes (`set` gets each value); tells
/// whether the values are the relative ones.
fn read_delta_column<'a>(
    reader: &mut ByteReader,
    processes: impl IntoIterator<Item = &'a mut Process>,
    set: impl Fn(&mut Process, i64),
) -> Result<bool> {
    let relative = match reader.u64()? {
        0 => false,
        1 => true,
        _ => {
            return Err(TraceError::Invalid(
                "section PROC: unknown column form".into(),
            ))
        }
    };
    let mut previous = 0i64;
    for process in processes {
        previous = previous.wrapping_add(reader.i64()?);
        set(process, previous);
    }
    Ok(relative)
}

/// The processes that keep their own times (version 11 codes below `FIRST_GROUP`).
fn own_times<'a>(processes: &'a mut [Process], codes: &[u64]) -> Vec<&'a mut Process> {
    processes
        .iter_mut()
        .zip(codes)
        .filter(|(_, code)| **code < FIRST_GROUP)
        .map(|(process, _)| process)
        .collect()
}

pub(super) fn decode_processes(reader: &mut ByteReader) -> Result<(Vec<Process>, u64)> {
    let invalid = |what: &str| TraceError::Invalid(format!("section PROC: {what}"));
    let step = reader.u64()?.max(1);
    // Every process takes at least one byte in its pid's and its parent's columns.
    let count = reader.count(2)?;
    let mut processes = vec![
        Process {
            pid: 0,
            parent_pid: 0,
            parent: None,
            exec_of: None,
            forked: false,
            executable: Vec::new(),
            arguments: Vec::new(),
            working_directory: Vec::new(),
            hostname: Vec::new(),
            start: 0,
            end: 0,
            main_start: None,
            ending: Ending::Unknown,
            threads: 0,
            untraced_calls: 0,
            rank: None,
            runtime_events_dropped: 0,
            runtime_bytes_dropped: [0; 2],
            kernel_io: None,
            unrecorded: None,
            group_times: false,
            group_counters: false,
        };
        count
    ];
    let narrow = |value: i64, what: &str| u32::try_from(value).map_err(|_| invalid(what));
    let mut previous = 0i64;
    for process in processes.iter_mut() {
        previous = previous.wrapping_add(reader.i64()?);
        process.pid = narrow(previous, "pid out of range")?;
    }
    let mut previous = 0i64;
    for process in processes.iter_mut() {
        previous = previous.wrapping_add(reader.i64()?);
        process.parent_pid = narrow(previous, "parent pid out of range")?;
    }
    let optional = |code: u64, what: &str| match code {
        0 => Ok(None),
        code if code - 1 < count as u64 => Ok(Some((code - 1) as u32)),
        _ => Err(invalid(&format!("{what} index out of range"))),
    };
    let parents = read_column(reader, count)?;
    let execs = read_column(reader, count)?;
    let forked = read_column(reader, count)?;
    for (index, process) in processes.iter_mut().enumerate() {
        process.parent = optional(parents[index], "parent process")?;
        process.exec_of = optional(execs[index], "exec'd process")?;
        process.forked = forked[index] != 0;
    }
    let executables = decode_string_column(reader, count)?;
    let arguments = decode_string_column(reader, count)?;
    let directories = decode_string_column(reader, count)?;
    let hostnames = decode_string_column(reader, count)?;
    let argument_counts = read_column(reader, count)?;
    for (index, process) in processes.iter_mut().enumerate() {
        process.executable = executables[index].clone();
        process.working_directory = directories[index].clone();
        process.hostname = hostnames[index].clone();
        let expected = argument_counts[index];
        process.arguments = if expected == 0 {
            Vec::new()
        } else {
            arguments[index]
                .split(|byte| *byte == 0)
                .map(<[u8]>::to_vec)
                .collect()
        };
        if process.arguments.len() as u64 != expected {
            return Err(invalid("argument count does not match"));
        }
    }
    let codes = read_column(reader, count)?;
    let mut previous = 0i64;
    for process in own_times(&mut processes, &codes) {
        previous = previous.wrapping_add(reader.i64()?);
        process.start = (previous as u64).saturating_mul(step);
    }
    let relative = read_delta_column(
        reader,
        own_times(&mut processes, &codes),
        |process, value| {
            process.end = (value as u64).saturating_mul(step);
        },
    )?;
    for process in own_times(&mut processes, &codes) {
        process.end = match relative {
            true => process.start.saturating_add(process.end),
            false => process.end.max(process.start),
        };
    }
    let relative = read_delta_column(
        reader,
        own_times(&mut processes, &codes),
        |process, value| {
            process.main_start = (value as u64)
                .checked_sub(1)
                .map(|units| units.saturating_mul(step));
        },
    )?;
    for process in own_times(&mut processes, &codes) {
        if relative {
            process.main_start = process
                .main_start
                .map(|offset| process.start.saturating_add(offset));
        }
    }
    // Each group's statistics, spread over its members.
    let groups = reader.count(1)?;
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); groups];
    // Members that keep their own counters.
    let mut own_counters = vec![false; count];
    for (index, code) in codes.iter().enumerate() {
        match groups::group_of(*code) {
            None => {
                processes[index].group_times = code & OWN_TIMES_ESTIMATED != 0;
                processes[index].group_counters = code & OWN_COUNTERS_ESTIMATED != 0;
            }
            Some((group, bits)) => {
                members
                    .get_mut(group)
                    .ok_or_else(|| invalid("process group out of range"))?
                    .push(index);
                own_counters[index] = bits & MEMBER_OWN_COUNTERS != 0;
                processes[index].group_counters = bits & MEMBER_COUNTERS_ESTIMATED != 0;
            }
        }
    }
    let mut counters_grouped = vec![false; count];
    for members in &members {
        if members.is_empty() {
            return Err(invalid("process group without members"));
        }
        let main_known = reader.u64()? != 0;
        let counters = reader.u64()? != 0;
        let starts = Spread::read(reader, members.len())?.values(members.len());
        let ends = Spread::read(reader, members.len())?.values(members.len());
        let mains = match main_known {
            true => Some(Spread::read(reader, members.len())?.values(members.len())),
            false => None,
        };
        for (position, index) in members.iter().enumerate() {
            let process = &mut processes[*index];
            process.group_times = true;
            process.start = starts[position].saturating_mul(step);
            process.end = ends[position].saturating_mul(step).max(process.start);
            process.main_start = mains.as_ref().map(|mains| {
                process
                    .start
                    .saturating_add(mains[position].saturating_mul(step))
                    .min(process.end)
            });
        }
        let sharing: Vec<usize> = members
            .iter()
            .copied()
            .filter(|index| !own_counters[*index])
            .collect();
        if counters && !sharing.is_empty() {
            let mut columns = Vec::with_capacity(COUNTERS);
            for _ in 0..COUNTERS {
                columns.push(Spread::read(reader, sharing.len())?.values(sharing.len()));
            }
            for (position, index) in sharing.iter().enumerate() {
                groups::set_counters(
                    &mut processes[*index],
                    std::array::from_fn(|column| columns[column][position]),
                );
                processes[*index].group_counters = true;
                counters_grouped[*index] = true;
            }
        }
    }
    let ending_codes = read_column(reader, count)?;
    let statuses = read_column(reader, count)?;
    let threads = read_column(reader, count)?;
    let untraced = read_column(reader, count)?;
    let own_events = counters_grouped.iter().filter(|grouped| !**grouped).count();
    let mut events = sums(read_column(reader, own_events)?);
    for (index, process) in processes.iter_mut().enumerate() {
        let status = i32::try_from(unzigzag(statuses[index]))
            .map_err(|_| invalid("exit status out of range"))?;
        process.ending = match (ending_codes[index], status) {
            (1, _) => Ending::Exited,
            (2, status) => Ending::ExitCall(status),
            (3, _) => Ending::Exec,
            _ => Ending::Unknown,
        };
        process.threads =
            u32::try_from(threads[index]).map_err(|_| invalid("thread count out of range"))?;
        process.untraced_calls = untraced[index];
        if !counters_grouped[index] {
            process.runtime_events_dropped = events.next().unwrap_or(0) as u64;
        }
    }
    for (process, rank) in processes.iter_mut().zip(sums(read_column(reader, count)?)) {
        process.rank = match rank {
            -1 => None,
            rank => Some(narrow(rank, "rank out of range")?),
        };
    }
    // A group's counters are read already: its members' presence says so only.
    let present: Vec<bool> = read_column(reader, count)?
        .into_iter()
        .zip(&counters_grouped)
        .map(|(present, grouped)| present != 0 && !grouped)
        .collect();
    let with_counters = present.iter().filter(|present| **present).count();
    let mut columns = vec![[0u64; 6]; with_counters];
    for column in 0..6 {
        let mut previous = 0u64;
        for values in columns.iter_mut() {
            previous = previous.wrapping_add(reader.i64()? as u64);
            values[column] = previous;
        }
    }
    let mut columns = columns.into_iter();
    for (process, present) in processes.iter_mut().zip(present) {
        if !present {
            continue;
        }
        let [read_beyond, written_beyond, read_calls, write_calls, read, written] = columns
            .next()
            .expect("one column entry per process that has counters");
        let events = process.runtime_events_dropped;
        groups::set_counters(
            process,
            [
                read_beyond,
                written_beyond,
                read_calls,
                write_calls,
                read,
                written,
                events,
            ],
        );
    }
    let present = read_column(reader, count)?;
    for (process, present) in processes.iter_mut().zip(present) {
        if present != 0 {
            process.unrecorded = Some(Unrecorded {
                calls: reader.u64()?,
                errno: i32::try_from(reader.i64()?).map_err(|_| invalid("errno out of range"))?,
                at: reader.u64()?,
            });
        }
    }
    Ok((processes, step))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(values: &[u64]) -> Vec<u8> {
        let mut out = ByteWriter::new();
        column(&mut out, values.iter().copied());
        out.into_inner()
    }

    #[test]
    fn columns_alike_from_rank_to_rank_are_runs_and_read_back() {
        let alike = vec![3u64; 10_000];
        let steps: Vec<u64> = (0..100).collect();
        let mixed = vec![1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3];
        for values in [vec![], alike.clone(), steps.clone(), mixed] {
            let bytes = written(&values);
            let back = read_column(&mut ByteReader::new(&bytes, "t"), values.len()).unwrap();
            assert_eq!(back, values);
        }
        // 10,000 equal values: one run (count, value, length − 1) — 4 bytes; distinct
        // values as they are, after a 0.
        assert_eq!(written(&alike).len(), 4);
        assert_eq!(written(&steps).len(), 101);
    }

    #[test]
    fn a_column_of_the_wrong_length_is_refused() {
        let bytes = written(&[7; 10]);
        // Fewer or more values than the runs hold; more runs than values.
        assert!(read_column(&mut ByteReader::new(&bytes, "t"), 9).is_err());
        assert!(read_column(&mut ByteReader::new(&bytes, "t"), 11).is_err());
        let mut out = ByteWriter::new();
        out.u64(5);
        assert!(read_column(&mut ByteReader::new(&out.buffer, "t"), 4).is_err());
        // A run past the end, however long it says it is.
        let mut out = ByteWriter::new();
        out.u64(1);
        out.u64(7);
        out.u64(u64::MAX);
        assert!(read_column(&mut ByteReader::new(&out.buffer, "t"), 4).is_err());
    }
}
