//! PROC, the section of process images: how each is written and read (docs/FORMAT.md,
//! "PROC").

use cairn_format::bytes::{ByteReader, ByteWriter};

use super::groups::{
    self, Spread, COUNTERS, FIRST_GROUP, MEMBER_COUNTERS_ESTIMATED, MEMBER_OWN_COUNTERS,
    OWN_COUNTERS_ESTIMATED, OWN_TIMES_ESTIMATED,
};
use super::{optional, read_optional, Ending, FileInfo, Process, Unrecorded};
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
    for process in processes {
        optional(out, process.parent);
        optional(out, process.exec_of);
        out.u64(process.forked as u64);
    }
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
    for process in processes {
        out.u64(process.arguments.len() as u64);
    }
    // Version 11: which processes keep their own times, then those times, then each
    // group's statistics.
    let groups = groups::groups(processes, shared);
    for code in &groups.codes {
        out.u64(*code);
    }
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
    let mut previous = 0i64;
    for (index, process) in processes.iter().enumerate() {
        let (code, status) = ending_code(process.ending);
        out.u64(code);
        out.i64(status);
        out.u64(process.threads as u64);
        out.u64(process.untraced_calls);
        // A group's counters are its statistics (above).
        if !groups.counters_grouped(index) {
            out.i64(process.runtime_events_dropped as i64 - previous);
            previous = process.runtime_events_dropped as i64;
        }
    }
    let mut previous = 0i64;
    for process in processes {
        let rank = process.rank.map_or(-1, |rank| rank as i64);
        out.i64(rank - previous);
        previous = rank;
    }
    // The kernel's counters: which processes have them, then each counter column by
    // column as the difference from the previous such process's (ranks doing the same
    // thing differ by little).
    for process in processes {
        out.u64(process.kernel_io.is_some() as u64);
    }
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
    for process in processes {
        out.u64(process.unrecorded.is_some() as u64);
    }
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
    let mut previous = 0i64;
    for entry in entries {
        out.i64(entry - previous);
        previous = entry;
    }
}

/// Reads what [`encode_string_column`] wrote: `count` values.
pub(super) fn decode_string_column(reader: &mut ByteReader, count: usize) -> Result<Vec<Vec<u8>>> {
    let distinct = crate::names::decode(reader)?;
    let mut previous = 0i64;
    (0..count)
        .map(|_| {
            previous = previous.wrapping_add(reader.i64()?);
            usize::try_from(previous)
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
    // Every process takes at least one byte in each of a dozen columns.
    let count = reader.count(12)?;
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
    for process in processes.iter_mut() {
        process.parent = read_optional(reader, count, "parent process")?;
        process.exec_of = read_optional(reader, count, "exec'd process")?;
        process.forked = reader.u64()? != 0;
    }
    let executables = decode_string_column(reader, count)?;
    let arguments = decode_string_column(reader, count)?;
    let directories = decode_string_column(reader, count)?;
    let hostnames = decode_string_column(reader, count)?;
    for (index, process) in processes.iter_mut().enumerate() {
        process.executable = executables[index].clone();
        process.working_directory = directories[index].clone();
        process.hostname = hostnames[index].clone();
        let expected = reader.u64()?;
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
    let mut codes = Vec::with_capacity(count);
    for _ in 0..count {
        codes.push(reader.u64()?);
    }
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
    let mut previous = 0i64;
    for (index, process) in processes.iter_mut().enumerate() {
        process.ending = match (reader.u64()?, reader.i32()?) {
            (1, _) => Ending::Exited,
            (2, status) => Ending::ExitCall(status),
            (3, _) => Ending::Exec,
            _ => Ending::Unknown,
        };
        process.threads = reader.u32()?;
        process.untraced_calls = reader.u64()?;
        if !counters_grouped[index] {
            previous = previous.wrapping_add(reader.i64()?);
            process.runtime_events_dropped = previous as u64;
        }
    }
    let mut previous = 0i64;
    for process in processes.iter_mut() {
        previous = previous.wrapping_add(reader.i64()?);
        process.rank = match previous {
            -1 => None,
            rank => Some(narrow(rank, "rank out of range")?),
        };
    }
    // A group's counters are read already: its members' presence says so only.
    let mut present = Vec::with_capacity(processes.len());
    for grouped in &counters_grouped {
        present.push(reader.u64()? != 0 && !grouped);
    }
    let count = present.iter().filter(|present| **present).count();
    let mut columns = vec![[0u64; 6]; count];
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
    let mut present = Vec::with_capacity(processes.len());
    for _ in 0..processes.len() {
        present.push(reader.u64()? != 0);
    }
    for (process, present) in processes.iter_mut().zip(present) {
        if present {
            process.unrecorded = Some(Unrecorded {
                calls: reader.u64()?,
                errno: i32::try_from(reader.i64()?).map_err(|_| invalid("errno out of range"))?,
                at: reader.u64()?,
            });
        }
    }
    Ok((processes, step))
}
