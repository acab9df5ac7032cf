//! Folding, encoding and expanding streams of known events (exact round trips).

use super::*;
use proptest::prelude::*;

fn class_of(call: u16) -> Option<CallClass> {
    [
        CallClass::Open,
        CallClass::Read,
        CallClass::Write,
        CallClass::Seek,
        CallClass::Dup,
        CallClass::Close,
    ]
    .get(call as usize)
    .copied()
}

/// Events from a small alphabet, so that repetitions (and loops) happen.
fn events() -> impl Strategy<Value = Vec<Event>> {
    proptest::collection::vec(
        (
            0u16..6,
            0u32..3,
            3u64..6,
            proptest::option::of(0u32..4),
            // Irregular offsets too, which go to the stream's column.
            prop_oneof![
                Just(-1i64),
                (0i64..3).prop_map(|o| o * 4096),
                0i64..1_000_000
            ],
            prop_oneof![Just(4096u64), Just(100)],
            0u64..3,
            0u32..2,
            1u64..1000,
            0u64..100,
        ),
        0..300,
    )
    .prop_map(|raw| {
        let mut clock = 0;
        raw.into_iter()
            .map(
                |(call, context, handle, file, offset, request, short, failed, duration, gap)| {
                    clock += gap;
                    let start = clock;
                    clock += duration;
                    let failed = failed == 1 && short == 2;
                    Event {
                        call,
                        start,
                        duration,
                        file,
                        handle,
                        offset,
                        request,
                        result: if failed {
                            -1
                        } else {
                            request as i64 - short as i64
                        },
                        errno: if failed { 9 } else { 0 },
                        context,
                        aux: short,
                        flags: if failed { event_flags::FAILED } else { 0 },
                    }
                },
            )
            .collect()
    })
}

/// The stream read back from its bytes, and its events expanded.
#[test]
fn tags_counting_the_steps_of_a_loop_fold_and_expand_exactly() {
    // A ring step repeated: Irecv and Isend tagged with the step (0..steps), a Waitall,
    // an Allreduce per round; wildcard tags (-1) and a tag that jumps back in between.
    let point_to_point = |call: u16| match call {
        0 | 1 => Some(CallClass::PointToPoint),
        2 => Some(CallClass::Completion),
        _ => Some(CallClass::Collective),
    };
    let events = |rounds: u64, steps: u64| {
        let mut events = Vec::new();
        let mut clock = 0;
        for round in 0..rounds {
            for step in 0..steps {
                let tag = if round == 1 && step == 2 {
                    u32::MAX
                } else {
                    step as u32
                };
                for (call, context, peer) in [(0u16, 1u32, 3u64), (1, 2, 1), (2, 3, 0)] {
                    clock += 10;
                    events.push(Event {
                        call,
                        start: clock,
                        duration: 3,
                        file: None,
                        handle: 0x55,
                        offset: -1,
                        request: 4,
                        result: 4,
                        errno: 0,
                        context,
                        aux: if call < 2 {
                            peer | (tag as u64) << 32
                        } else {
                            2
                        },
                        flags: 0,
                    });
                }
            }
            clock += 10;
            events.push(Event {
                call: 3,
                start: clock,
                duration: 5,
                file: None,
                handle: 0x55,
                offset: -1,
                request: 32,
                result: 32,
                errno: 0,
                context: 4,
                aux: u32::MAX as u64,
                flags: 0,
            });
        }
        events
    };
    let mut sizes = Vec::new();
    for rounds in [10u64, 1000] {
        let events = events(rounds, 5);
        let mut encoder = StreamEncoder::default();
        for event in &events {
            encoder.push(event, point_to_point(event.call));
        }
        let stream = encoder.finish();
        let stream = EncodedStream::from_bytes(stream.bytes().to_vec()).unwrap();
        let mut expanded = Vec::new();
        stream.expand(point_to_point, |event| expanded.push(event));
        assert_eq!(expanded.len(), events.len());
        for (original, back) in events.iter().zip(&expanded) {
            assert_eq!(exact(original), exact(back));
        }
        // A walk told to stop, inside the folded loop, visits nothing more.
        let mut visited = 0;
        stream.expand_while_for_rank(0, stream.first_start, point_to_point, |_| {
            visited += 1;
            visited < 7
        });
        assert_eq!(visited, 7);
        sizes.push(stream.bytes().len());
    }
    // The steps fold into loops: 100 times the rounds, the same structure.
    assert!(sizes[1] <= sizes[0] + 16, "{sizes:?}");
}

#[test]
fn halo_tags_stay_themselves_and_counting_tags_become_steps() {
    // Two call sites: a halo's receive tagged by direction (four directions, the same
    // every step), and a send tagged by the step number (counting).
    let class = |_: u16| Some(CallClass::PointToPoint);
    let events = |steps: u64| {
        let mut events = Vec::new();
        for step in 0..steps {
            for direction in 0..4u64 {
                events.push((0u32, direction ^ 1));
            }
            events.push((1, step));
        }
        events
            .into_iter()
            .enumerate()
            .map(|(index, (context, tag))| Event {
                call: context as u16,
                start: 10 * index as u64,
                duration: 3,
                file: None,
                handle: 0x55,
                offset: -1,
                request: 64,
                result: 64,
                errno: 0,
                context: context + 1,
                aux: 7 | tag << 32,
                flags: 0,
            })
            .collect::<Vec<Event>>()
    };
    let mut sizes = Vec::new();
    for steps in [100u64, 1000] {
        let events = events(steps);
        let mut encoder = StreamEncoder::default();
        let mut relative = Relative::default();
        let mut stepped = Vec::new();
        for event in &events {
            encoder.push(event, class(event.call));
            stepped.push(relative.encode(event, class(event.call)).flags & TAG_STEP != 0);
        }
        // The halo's tags are never steps; the counter's are once 32 distinct ones passed.
        let counter_steps: Vec<bool> = stepped.iter().skip(4).step_by(5).copied().collect();
        assert!(stepped.iter().enumerate().all(|(i, s)| i % 5 == 4 || !s));
        assert_eq!(counter_steps.iter().position(|s| *s), Some(32));
        assert!(counter_steps[32..].iter().all(|s| *s));
        let stream = EncodedStream::from_bytes(encoder.finish().bytes().to_vec()).unwrap();
        let mut expanded = Vec::new();
        stream.expand(class, |event| expanded.push(event));
        assert_eq!(expanded.len(), events.len());
        for (original, back) in events.iter().zip(&expanded) {
            assert_eq!(exact(original), exact(back));
            assert_eq!(back.flags & !event_flags::TIMES_FROM_STATISTICS, 0);
        }
        sizes.push(stream.bytes().len());
    }
    assert!(sizes[1] <= sizes[0] + 16, "{sizes:?}");
}

/// That `stream`, read back, stands for `events` with every exactly kept field, and
/// ends at `last_end`.
fn expands_to(
    stream: &EncodedStream,
    events: &[Event],
    last_end: u64,
) -> std::result::Result<(), proptest::test_runner::TestCaseError> {
    let (decoded, expanded) = reread_and_expand(stream);
    prop_assert_eq!(decoded.count, events.len() as u64);
    prop_assert_eq!(expanded.len(), events.len());
    for (original, back) in events.iter().zip(&expanded) {
        prop_assert_eq!(exact(original), exact(back));
    }
    prop_assert_eq!(decoded.last_end, last_end);
    Ok(())
}

fn reread_and_expand(tree: &EncodedStream) -> (EncodedStream, Vec<Event>) {
    let decoded = EncodedStream::from_bytes(tree.bytes().to_vec()).unwrap();
    let mut expanded = Vec::new();
    decoded.expand(class_of, |event| expanded.push(event));
    (decoded, expanded)
}

/// The fields a trace keeps exactly (the flag expansion adds about times left out).
/// Every byte the stream's leaves say was requested: each leaf's sizes in the column, or
/// its key's size for each occurrence.
fn requested_bytes(stream: &EncodedStream) -> u64 {
    let mut requested = 0u64;
    let mut leaves: Vec<Item> = stream.nodes().iter().collect();
    while let Some(item) = leaves.pop() {
        match item {
            Item::Leaf(leaf) => {
                requested += match &leaf.column_sizes {
                    Some(sizes) => sizes.sum,
                    None => leaf.key.request * leaf.occurrences(),
                }
            }
            Item::Loop { body, .. } => leaves.extend(body.iter()),
        }
    }
    requested
}

fn exact(event: &Event) -> (u16, Option<u32>, u64, i64, u64, i64, i32, u32, u64, u32) {
    (
        event.call,
        event.file,
        event.handle,
        event.offset,
        event.request,
        event.result,
        event.errno,
        event.context,
        event.aux,
        event.flags & !event_flags::TIMES_FROM_STATISTICS,
    )
}

/// Segments of calls (call, file, first offset or -1, stride, duration), each body repeated
/// the given times.
type BlockSegments = Vec<(Vec<(u16, u32, i64, i64, u64)>, u64)>;

fn blocks_expand_to_their_events(
    segments: BlockSegments,
) -> std::result::Result<(), proptest::test_runner::TestCaseError> {
    // Each segment: a body of calls repeated; pushed as the tracer stages it (two
    // repetitions one by one, the rest as one block with summed statistics, each
    // position's offsets its own stride apart) and expanded: every exactly kept
    // field comes back, also when two positions on one file move apart (then the
    // block goes in event by event).
    let mut events = Vec::new();
    let mut blocks = StreamEncoder::default();
    let mut clock = 0u64;
    let mut last_end = 0u64;
    for (body, repetitions) in segments {
        let mut segment: Vec<Vec<Event>> = Vec::new();
        for repetition in 0..repetitions {
            let mut one = Vec::new();
            for (call, file, offset, stride, duration) in &body {
                clock += 5;
                one.push(Event {
                    call: *call,
                    start: clock,
                    duration: *duration,
                    file: Some(*file),
                    handle: 3 + *file as u64,
                    offset: if *offset < 0 {
                        -1
                    } else {
                        offset + stride * repetition as i64
                    },
                    request: 64,
                    result: 64,
                    errno: 0,
                    context: *file + 4 * *call as u32,
                    aux: 0,
                    flags: 0,
                });
                clock += duration;
            }
            segment.push(one);
        }
        for (index, one) in segment.iter().enumerate() {
            if index < 2 || repetitions < 3 {
                for event in one {
                    blocks.push(event, class_of(event.call));
                }
            }
        }
        if repetitions >= 3 {
            let mut positions = Vec::new();
            let mut before = segment[1].last().map_or(0, Event::end);
            let mut statistics = vec![(Stats::default(), Stats::default()); body.len()];
            for one in &segment[2..] {
                for (position, event) in one.iter().enumerate() {
                    statistics[position].0.add(event.duration);
                    statistics[position]
                        .1
                        .add(event.start.saturating_sub(before));
                    before = event.end();
                }
            }
            for (position, event) in segment[2].iter().enumerate() {
                let (_, _, offset, stride, _) = body[position];
                positions.push(BlockPosition {
                    event: event.clone(),
                    class: class_of(event.call),
                    stride: if offset < 0 { 0 } else { stride },
                    last_end: segment.last().unwrap()[position].end(),
                    duration: statistics[position].0,
                    gap: statistics[position].1,
                });
            }
            blocks.push_block(&positions, repetitions - 2);
        }
        last_end = segment
            .last()
            .and_then(|one| one.last())
            .map_or(last_end, Event::end);
        events.extend(segment.into_iter().flatten());
    }
    let stream = blocks.finish();
    // Blocks that did not extend a loop went in a repetition at a time: every leaf's
    // statistics still count its occurrences.
    prop_assert_eq!(
        statistics_as_structure(&stream.nodes().to_nodes(), 1),
        events.len() as u64
    );
    expands_to(&stream, &events, last_end)?;
    Ok(())
}

#[test]
fn a_jittering_block_position_after_one_of_another_stride_expands_to_its_events() {
    // Found by the proptest below (a CI run, 2026-11-30): a tracer block whose second
    // position's jump jitters (its offsets in the column) follows a position on the same
    // file that moves by another stride, so its jump changes every repetition; the block
    // took the second repetition's entry for all of them (an offset 4,096 bytes off).
    blocks_expand_to_their_events(vec![
        (vec![(2, 1, 4096, 0, 1)], 1),
        (vec![(2, 1, 0, 0, 1), (2, 1, 4096, 64, 1)], 5),
        (vec![(1, 1, 4096, 0, 1), (2, 1, 4096, 4096, 1)], 5),
    ])
    .unwrap();
}

proptest! {
    #[test]
    fn every_exactly_kept_field_survives(events in events()) {
        let mut encoder = StreamEncoder::default();
        for event in &events {
            encoder.push(event, class_of(event.call));
        }
        let tree = encoder.finish();
        let (decoded, expanded) = reread_and_expand(&tree);
        prop_assert_eq!(&decoded, &tree);
        prop_assert_eq!(decoded.count, events.len() as u64);
        prop_assert_eq!(expanded.len(), events.len());
        for (original, back) in events.iter().zip(&expanded) {
            prop_assert_eq!(exact(original), exact(back));
        }
        if let (Some(first), Some(back)) = (events.first(), expanded.first()) {
            prop_assert_eq!(first.start, back.start);
        }
        prop_assert_eq!(decoded.last_end, events.iter().map(Event::end).max().unwrap_or(0));
    }

    #[test]
    fn sizes_of_their_own_survive_the_column(phases in proptest::collection::vec((1u16..3, 0u32..3, any::<bool>(), any::<bool>(), 1u64..80), 1..8), seed in any::<u64>()) {
        // Phases of reads or writes at a calling context, sizes of their own (or a few
        // repeated), appended or at random offsets, some failing: every size and offset
        // comes back, and the leaves' figures hold every byte requested.
        let mut events = Vec::new();
        let mut clock = 0u64;
        let mut draw = seed;
        for (call, context, wandering, random_offsets, count) in phases {
            for index in 0..count {
                draw = mix(draw);
                let size = if wandering { 1 + draw % 100_000 } else { [512, 4096][index as usize % 2] };
                let failed = draw % 29 == 0;
                clock += 9;
                events.push(Event {
                    call,
                    start: clock,
                    duration: 3,
                    file: Some(context % 2),
                    handle: 3 + (context % 2) as u64,
                    offset: if random_offsets { (draw >> 20) as i64 % 1_000_000 * 512 } else { -1 },
                    request: size,
                    result: if failed { -1 } else { size.saturating_sub(draw % 3) as i64 },
                    errno: if failed { 5 } else { 0 },
                    context,
                    aux: 0,
                    flags: if failed { event_flags::FAILED } else { 0 } | if random_offsets { event_flags::EXPLICIT_OFFSET } else { 0 },
                });
            }
        }
        let mut encoder = StreamEncoder::default();
        for event in &events {
            encoder.push(event, class_of(event.call));
        }
        let stream = encoder.finish();
        let (decoded, expanded) = reread_and_expand(&stream);
        prop_assert_eq!(&decoded, &stream);
        prop_assert_eq!(expanded.len(), events.len());
        for (original, back) in events.iter().zip(&expanded) {
            prop_assert_eq!(exact(original), exact(back));
        }
        prop_assert_eq!(requested_bytes(&decoded), events.iter().map(|event| event.request).sum::<u64>());
    }

    #[test]
    fn offsets_records_of_sizes_expand_to_their_events(phases in proptest::collection::vec((1u16..3, 0u32..3, any::<bool>(), any::<bool>(), 0usize..30, 1usize..120, 1usize..3), 1..6), seed in any::<u64>()) {
        // Phases of reads or writes at a calling context with sizes of their own (or of
        // one size, which the encoder keeps in the key), appended (offsets each the end of
        // the one before) or at random offsets, alone or each followed by the same seek
        // (a body of two, as HDF5's H5Dwrite and its chunk's pwrite): the first `alone`
        // repetitions pushed one by one, the rest as an offsets record of sizes with
        // summed statistics per position — as the tracer stages them. Every exact field
        // comes back in order, whether the encoder takes the record whole (sizes in the
        // column) or one by one, and the leaves' figures hold every byte requested.
        let mut events = Vec::new();
        let mut encoder = StreamEncoder::default();
        let mut clock = 0u64;
        let mut draw = seed;
        let mut end = 0i64;
        for (call, context, wandering, random_offsets, alone, count, period) in phases {
            let mut phase = Vec::new();
            for _ in 0..count {
                draw = mix(draw);
                let size = if wandering { 1 + draw % 100_000 } else { 4096 };
                let offset = if random_offsets { (draw >> 20) as i64 % 1_000_000 * 512 } else { end };
                end = offset + size as i64;
                clock += 9;
                phase.push(Event {
                    flags: if random_offsets { event_flags::EXPLICIT_OFFSET } else { 0 },
                    ..positioned(call, clock, 3 + draw % 4, context % 2, offset, size, context)
                });
                if period == 2 {
                    // A seek to the file's start (explicit, the same every time).
                    clock += 4;
                    phase.push(Event {
                        call: 3,
                        start: clock,
                        duration: 2,
                        file: Some(context % 2),
                        handle: 3 + (context % 2) as u64,
                        offset: 0,
                        request: 0,
                        result: 0,
                        errno: 0,
                        context: 7,
                        aux: 0,
                        flags: 0,
                    });
                }
            }
            let alone = alone.min(count) * period;
            for event in &phase[..alone] {
                encoder.push(event, class_of(event.call));
            }
            if phase.len() > alone {
                let mut previous_end = if alone > 0 { phase[alone - 1].end() } else { events.last().map_or(0, Event::end) };
                let mut statistics = vec![(Stats::default(), Stats::default(), 0u64); period];
                for (index, event) in phase[alone..].iter().enumerate() {
                    let position = &mut statistics[index % period];
                    position.0.add(event.duration);
                    position.1.add(event.start.saturating_sub(previous_end));
                    position.2 = event.end();
                    previous_end = event.end();
                }
                let body: Vec<BlockPosition> = phase[alone..alone + period]
                    .iter()
                    .zip(statistics)
                    .map(|(event, (duration, gap, last_end))| BlockPosition {
                        event: event.clone(),
                        class: class_of(event.call),
                        stride: 0,
                        last_end,
                        duration,
                        gap,
                    })
                    .collect();
                let offsets: Vec<i64> = phase[alone..].iter().map(|event| event.offset).collect();
                let sizes: Vec<u64> = phase[alone..].iter().step_by(period).map(|event| event.request).collect();
                encoder.push_offsets(&body, &offsets, &sizes, sizes.len() as u64);
            }
            events.extend(phase);
        }
        let stream = encoder.finish();
        let (decoded, expanded) = reread_and_expand(&stream);
        prop_assert_eq!(&decoded, &stream);
        prop_assert_eq!(expanded.len(), events.len());
        for (original, back) in events.iter().zip(&expanded) {
            prop_assert_eq!(exact(original), exact(back));
        }
        prop_assert_eq!(requested_bytes(&decoded), events.iter().map(|event| event.request).sum::<u64>());
    }

    #[test]
    fn runs_folded_by_the_tracer_expand_to_their_events(blocks in proptest::collection::vec((0u16..6, 0u32..3, prop_oneof![Just(-1i64), (0i64..3).prop_map(|o| o * 4096)], prop_oneof![Just(0i64), Just(4096), Just(-100)], 1u64..20, 1u64..500), 0..40)) {
        // Each block: `count` occurrences of one call with the same values, offsets
        // `stride` apart; pushed as the tracer stages them (the first alone, the rest
        // as one run with summed statistics) and one by one — both expand the same.
        let mut events = Vec::new();
        let mut runs = StreamEncoder::default();
        let mut clock = 0u64;
        let mut last_end = 0u64;
        for (call, context, offset, stride, count, duration) in blocks {
            let mut block = Vec::new();
            for index in 0..count {
                clock += 7;
                block.push(Event {
                    call,
                    start: clock,
                    duration,
                    file: Some(context),
                    handle: 3,
                    offset: if offset < 0 { -1 } else { (offset + stride * index as i64).max(0) },
                    request: 4096,
                    result: 4096,
                    errno: 0,
                    context,
                    aux: 0,
                    flags: 0,
                });
                clock += duration;
            }
            // Offsets that a negative stride would push below 0 break the block up.
            let regular = block.windows(2).all(|pair| pair[1].offset - pair[0].offset == if offset < 0 { 0 } else { stride });
            let gap_of = |event: &Event, previous_end: u64| event.start.saturating_sub(previous_end);
            if regular && block.len() > 1 {
                let first = &block[0];
                runs.push(first, class_of(call));
                let rest = &block[1..];
                let mut duration = Stats::default();
                let mut gap = Stats::default();
                let mut previous_end = first.end();
                for event in rest {
                    duration.add(event.duration);
                    gap.add(gap_of(event, previous_end));
                    previous_end = event.end();
                }
                let step = if offset < 0 { 0 } else { stride };
                runs.push_run(&rest[0], class_of(call), rest.len() as u64, step, previous_end, duration, gap);
            } else {
                for event in &block {
                    runs.push(event, class_of(call));
                }
            }
            last_end = block.last().map_or(last_end, Event::end);
            events.extend(block);
        }
        expands_to(&runs.finish(), &events, last_end)?;
    }

    #[test]
    fn offsets_records_expand_to_their_events(segments in proptest::collection::vec((1u16..4, 0u32..2, 0usize..24, 1usize..200, any::<u64>(), prop_oneof![Just(0u32), Just(4u32)], 1usize..4), 0..6)) {
        // Each segment: a body of `period` calls repeated, its first (a seek, a read or a
        // write; pread's explicit-offset flag or not) at random offsets, the others a
        // transfer at the position the first reached (IOR -z) or at a fixed offset. The
        // first `alone` repetitions are pushed one by one as event records, the rest as
        // one offsets record with each position's summed statistics — as the tracer stages
        // random accesses — and expanded: every exact field comes back, in order, whether
        // the encoder takes the record whole (offsets in the column) or one by one (a site
        // not yet irregular).
        let mut events = Vec::new();
        let mut encoder = StreamEncoder::default();
        let mut clock = 0u64;
        for (call, context, alone, count, seed, flags, period) in segments {
            let mut state = seed | 1;
            let mut repetitions: Vec<Vec<Event>> = Vec::new();
            for _ in 0..count {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let offset = ((state >> 33) % 1024) as i64 * 4096;
                let seek = class_of(call) == Some(CallClass::Seek);
                let position_flags = event_flags::REQUEST_AT_POSITION | event_flags::RESULT_AT_POSITION;
                let mut body = Vec::new();
                for position in 0..period {
                    clock += 5;
                    let event = if position == 0 {
                        Event {
                            call,
                            start: clock,
                            duration: 3,
                            file: Some(context),
                            handle: 3 + context as u64,
                            offset,
                            request: if seek { offset as u64 } else { 4096 },
                            result: if seek { offset } else { 4096 },
                            errno: 0,
                            context,
                            aux: 0,
                            flags: if seek { position_flags } else { flags },
                        }
                    } else {
                        // A write at the position the first reached, then one at a fixed offset.
                        let at_position = position == 1;
                        Event {
                            call: 2,
                            start: clock,
                            duration: 4,
                            file: Some(context),
                            handle: 3 + context as u64,
                            offset: if at_position { offset + if seek { 0 } else { 4096 } } else { 1 << 30 },
                            request: 512,
                            result: 512,
                            errno: 0,
                            context: 10 + position as u32,
                            aux: 0,
                            flags: if at_position { 0 } else { event_flags::EXPLICIT_OFFSET },
                        }
                    };
                    clock += 3 + position as u64;
                    body.push(event);
                }
                repetitions.push(body);
            }
            let alone = alone.min(repetitions.len());
            for event in repetitions[..alone].iter().flatten() {
                encoder.push(event, class_of(event.call));
            }
            if let Some(first) = repetitions.get(alone) {
                let mut previous_end = events.last().map_or(0, Event::end);
                if alone > 0 {
                    previous_end = repetitions[alone - 1].last().unwrap().end();
                }
                let mut statistics = vec![(Stats::default(), Stats::default(), 0u64); period];
                for body in &repetitions[alone..] {
                    for (position, event) in body.iter().enumerate() {
                        statistics[position].0.add(event.duration);
                        statistics[position].1.add(event.start.saturating_sub(previous_end));
                        statistics[position].2 = event.end();
                        previous_end = event.end();
                    }
                }
                let body: Vec<BlockPosition> = first
                    .iter()
                    .zip(statistics)
                    .map(|(event, (duration, gap, last_end))| BlockPosition {
                        event: event.clone(),
                        class: class_of(event.call),
                        stride: 0,
                        last_end,
                        duration,
                        gap,
                    })
                    .collect();
                let offsets: Vec<i64> = repetitions[alone..].iter().flatten().map(|event| event.offset).collect();
                encoder.push_offsets(&body, &offsets, &[], (repetitions.len() - alone) as u64);
            }
            events.extend(repetitions.into_iter().flatten());
        }
        let last_end = events.last().map_or(0, Event::end);
        expands_to(&encoder.finish(), &events, last_end)?;
    }

    #[test]
    fn blocks_folded_by_the_tracer_expand_to_their_events(segments in proptest::collection::vec((proptest::collection::vec((1u16..3, 0u32..3, prop_oneof![Just(-1i64), (0i64..3).prop_map(|o| o * 4096)], prop_oneof![Just(0i64), Just(64), Just(4096)], 1u64..300), 1..6), 1u64..12), 0..12)) {
        blocks_expand_to_their_events(segments)?;
    }

    #[test]
    fn blocks_below_100_add_up_to_their_events(segments in proptest::collection::vec((proptest::collection::vec((1u16..3, prop_oneof![Just(64u64), Just(70), Just(4096)]), 1..8), 1u64..12, 0usize..4), 0..10)) {
        // As above at precision 0, bodies of runs of one call whose sizes differ (they blur
        // into one key: inner loops), a block beginning `rotation` events into the body
        // (where the tracer's exact repetition began): inner loops whose counts differ
        // keep histograms, and a block that extends a loop holding them must still add
        // up to its events (real HPCG at precision 0 panicked: "loops do not add up").
        let mut events = 0u64;
        let mut blocks = StreamEncoder::default();
        blocks.set_precision(0, 8);
        let mut clock = 0u64;
        for (body, repetitions, rotation) in segments {
            let rotation = rotation % body.len();
            let event = |position: usize, clock: u64| {
                let (call, size) = body[position % body.len()];
                Event {
                    call,
                    start: clock,
                    duration: 3,
                    file: None,
                    handle: 0,
                    offset: -1,
                    request: size,
                    result: size as i64,
                    errno: 0,
                    context: 5,
                    aux: 9,
                    flags: 0,
                }
            };
            // The events before the block: two repetitions and the rotation.
            for position in 0..2 * body.len() + rotation {
                clock += 5;
                blocks.push(&event(position, clock), class_of(body[position % body.len()].0));
                events += 1;
            }
            if repetitions >= 2 {
                let positions: Vec<BlockPosition> = (0..body.len())
                    .map(|index| {
                        let position = rotation + index;
                        let mut duration = Stats::default();
                        let mut gap = Stats::default();
                        for _ in 0..repetitions {
                            duration.add(3);
                            gap.add(2);
                        }
                        BlockPosition {
                            event: event(position, clock + 5),
                            class: class_of(body[position % body.len()].0),
                            stride: 0,
                            last_end: clock,
                            duration,
                            gap,
                        }
                    })
                    .collect();
                blocks.push_block(&positions, repetitions);
                events += repetitions * body.len() as u64;
            }
        }
        let stream = blocks.finish();
        prop_assert_eq!(stream.count, events);
        prop_assert_eq!(occurrences_with_histograms(&stream.nodes().to_nodes(), 1), events);
    }

    #[test]
    fn garbage_never_panics(data in proptest::collection::vec(any::<u8>(), 0..300)) {
        if let Ok(tree) = EncodedStream::from_bytes(data) {
            if tree.count < 10_000 {
                tree.expand(class_of, |_| {});
            }
        }
    }
}

/// splitmix64's finaliser: consecutive inputs give unrelated outputs.
fn mix(value: u64) -> u64 {
    let mut z = value.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A read or write (`call`) of `size` bytes at an explicit `offset` of `file` (handle 3 +
/// file), as `pread`/`pwrite` give it.
fn positioned(
    call: u16,
    start: u64,
    duration: u64,
    file: u32,
    offset: i64,
    size: u64,
    context: u32,
) -> Event {
    Event {
        call,
        start,
        duration,
        file: Some(file),
        handle: 3 + file as u64,
        offset,
        request: size,
        result: size as i64,
        errno: 0,
        context,
        aux: 0,
        flags: event_flags::EXPLICIT_OFFSET,
    }
}

#[test]
fn irregular_streams_past_the_dictionary_roundtrip() {
    let total = MAX_DICTIONARY as u64 + 5_000;
    let mut encoder = StreamEncoder::default();
    let event = |index: u64| Event {
        call: 1,
        start: index * 10,
        duration: 5,
        file: Some(0),
        handle: 3,
        // Aux differs too, so the keys do although the offsets and sizes go to the column.
        offset: (mix(index) % 1_000_003) as i64 * 512,
        request: 512 + mix(index) % 1_000_000_007,
        result: (512 + mix(index) % 1_000_000_007) as i64,
        errno: 0,
        context: 1,
        aux: mix(index + 1) >> 8,
        flags: 0,
    };
    for index in 0..total {
        encoder.push(&event(index), class_of(1));
    }
    let stream = encoder.finish();
    assert_eq!(stream.dictionary.len(), MAX_DICTIONARY);
    let mut index = 0;
    stream.expand(class_of, |back| {
        assert_eq!(exact(&back), exact(&event(index)));
        index += 1;
    });
    assert_eq!(index, total);
}

#[test]
fn random_offsets_go_to_the_column_and_expand_exactly() {
    // Reads at random 4 KiB offsets of a 64 MiB file, then a regular loop on the
    // same file: the random ones fold into one loop with their offsets in the column,
    // the regular ones keep their stride in the key.
    let event = |index: u64| {
        let offset = if index < 10_000 {
            (mix(index) % 16_384) as i64 * 4096
        } else {
            (index - 10_000) as i64 * 4096
        };
        positioned(
            1,
            index * 10,
            5,
            0,
            offset,
            4096,
            1 + (index >= 10_000) as u32,
        )
    };
    let mut encoder = StreamEncoder::default();
    for index in 0..11_000 {
        encoder.push(&event(index), class_of(1));
    }
    let stream = encoder.finish();
    assert!(stream.has_column());
    let entries = stream.column.len();
    assert!(
        (9_900..10_000).contains(&entries),
        "{entries} in the column"
    );
    let nodes = stream.nodes().to_nodes();
    assert!(nodes.len() < 200, "{} top-level nodes", nodes.len());
    let mut index = 0;
    stream.expand(class_of, |back| {
        assert_eq!(exact(&back), exact(&event(index)));
        index += 1;
    });
    assert_eq!(index, 11_000);
    let (reread, expanded) = reread_and_expand(&stream);
    assert_eq!(reread, stream);
    assert_eq!(expanded.len(), 11_000);
}

#[test]
fn sizes_that_keep_being_new_go_to_the_column_and_expand_exactly() {
    // Compressed blocks appended with sizes of their own, then read back at random
    // offsets, each with its own size; then a regular loop of 4 KiB writes, whose size
    // stays in the key. The random ones fold into a loop each, sizes (and the reads'
    // offsets) in the column; the leaves' figures are exact.
    let size_of = |index: u64| 1024 + mix(index + 77) % 7169;
    let mut ends = vec![0i64];
    for index in 0..5_000 {
        let end = ends[index as usize] + size_of(index) as i64;
        ends.push(end);
    }
    let event = |index: u64| {
        let (call, offset, size, context) = if index < 5_000 {
            (2, ends[index as usize], size_of(index), 1)
        } else if index < 10_000 {
            let block = mix(index) % 5_000;
            (1, ends[block as usize], size_of(block), 2)
        } else {
            (2, ends[5_000] + (index - 10_000) as i64 * 4096, 4096, 3)
        };
        positioned(call, index * 10, 5, 0, offset, size, context)
    };
    let mut encoder = StreamEncoder::default();
    for index in 0..11_000 {
        let event = event(index);
        encoder.push(&event, class_of(event.call));
    }
    let stream = encoder.finish();
    let nodes = stream.nodes().to_nodes();
    assert!(nodes.len() < 100, "{} top-level nodes", nodes.len());
    // Every size after each site's first few is in a leaf's figures, exactly.
    let mut in_column = (0u64, 0u64, 0u64);
    fn leaves<'n>(nodes: &'n [Node<EventKey>], all: &mut Vec<&'n Leaf<EventKey>>) {
        for node in nodes {
            match node {
                Node::Leaf(leaf) => all.push(leaf),
                Node::Loop { body, .. } => leaves(body, all),
            }
        }
    }
    let mut all = Vec::new();
    leaves(&nodes, &mut all);
    let mut bytes = 0;
    for leaf in all {
        match &leaf.column_sizes {
            Some(sizes) => {
                assert_eq!(leaf.key.request, 0);
                assert_eq!(sizes.count, leaf.occurrences());
                assert_eq!(sizes.bins.iter().sum::<u64>(), sizes.count);
                in_column.0 += sizes.count;
                in_column.1 += sizes.bins[1];
                in_column.2 += sizes.bins[2];
                bytes += sizes.sum;
            }
            None => bytes += leaf.key.request * leaf.occurrences(),
        }
    }
    assert!(in_column.0 > 9_900 && in_column.0 < 10_000, "{in_column:?}");
    // Every byte, and Darshan's bins: 1 KiB exactly in "100-1K", the rest in "1K-10K".
    assert_eq!(
        bytes,
        (0..11_000).map(|index| event(index).request).sum::<u64>()
    );
    let exactly_1k = (0..10_000)
        .filter(|index| event(*index).request == 1024)
        .count() as u64;
    assert!(
        in_column.1 <= exactly_1k && in_column.1 + 32 >= exactly_1k,
        "{in_column:?}"
    );
    assert_eq!(in_column.1 + in_column.2, in_column.0);
    let mut index = 0;
    stream.expand(class_of, |back| {
        assert_eq!(exact(&back), exact(&event(index)), "event {index}");
        index += 1;
    });
    assert_eq!(index, 11_000);
    let (reread, expanded) = reread_and_expand(&stream);
    assert_eq!(reread, stream);
    assert_eq!(expanded.len(), 11_000);
    // In bytes: about two a size and four an offset, not a leaf a call.
    eprintln!("{} bytes, {in_column:?}", stream.bytes().len());
    assert!(
        stream.bytes().len() < 11_000 * 8,
        "{} bytes",
        stream.bytes().len()
    );
}

#[test]
fn an_offsets_record_of_sizes_enters_whole_as_one_loop_with_its_statistics() {
    // Blocks of sizes of their own appended, then read back at random offsets, as the
    // tracer stages them: 20 event records, then one offsets record of sizes (and one of
    // offsets and sizes for the reads). Each record becomes one leaf repeated (the
    // record's duration statistics kept: min and max differ, which a push event by event
    // at the means would not give), every size in the column and every byte counted.
    let size_of = |index: u64| 1024 + mix(index + 5) % 7169;
    let mut ends = vec![0i64];
    for index in 0..3_000 {
        let end = ends[index as usize] + size_of(index) as i64;
        ends.push(end);
    }
    let event = |index: u64| {
        let (call, offset, size, flags) = if index < 3_000 {
            (2, ends[index as usize], size_of(index), 0)
        } else {
            let block = mix(index) % 3_000;
            (
                1,
                ends[block as usize],
                size_of(block),
                event_flags::EXPLICIT_OFFSET,
            )
        };
        Event {
            call,
            start: index * 10,
            duration: 2 + index % 5,
            file: Some(0),
            handle: 3,
            offset,
            request: size,
            result: size as i64,
            errno: 0,
            context: call as u32,
            aux: 0,
            flags,
        }
    };
    let mut encoder = StreamEncoder::default();
    for (first, last) in [(0u64, 3_000u64), (3_000, 6_000)] {
        for index in first..first + 20 {
            let event = event(index);
            encoder.push(&event, class_of(event.call));
        }
        let events: Vec<Event> = (first + 20..last).map(event).collect();
        let mut duration = Stats::default();
        let mut gap = Stats::default();
        for event in &events {
            duration.add(event.duration);
            gap.add(10 - event.duration);
        }
        let body = [BlockPosition {
            event: events[0].clone(),
            class: class_of(events[0].call),
            stride: 0,
            last_end: events[events.len() - 1].end(),
            duration,
            gap,
        }];
        let offsets: Vec<i64> = events.iter().map(|event| event.offset).collect();
        let sizes: Vec<u64> = events.iter().map(|event| event.request).collect();
        encoder.push_offsets(&body, &offsets, &sizes, events.len() as u64);
    }
    let stream = encoder.finish();
    let mut whole = 0;
    let mut bytes = 0;
    let mut pending: Vec<Item> = stream.nodes().iter().collect();
    while let Some(item) = pending.pop() {
        match item {
            Item::Leaf(leaf) => {
                if let Some(sizes) = &leaf.column_sizes {
                    bytes += sizes.sum;
                    if leaf.occurrences() >= 2_980 {
                        assert_eq!((leaf.duration.min, leaf.duration.max), (2, 6));
                        whole += 1;
                    }
                } else {
                    bytes += leaf.key.request * leaf.occurrences();
                }
            }
            Item::Loop { body, .. } => pending.extend(body.iter()),
        }
    }
    assert_eq!(whole, 2);
    assert_eq!(
        bytes,
        (0..6_000).map(|index| event(index).request).sum::<u64>()
    );
    let (reread, expanded) = reread_and_expand(&stream);
    assert_eq!(reread, stream);
    assert_eq!(expanded.len(), 6_000);
    for (index, back) in expanded.iter().enumerate() {
        assert_eq!(exact(back), exact(&event(index as u64)), "event {index}");
    }
}

#[test]
fn an_offsets_record_at_a_site_whose_sizes_went_to_the_column_keeps_every_size() {
    // Writes of sizes of their own at one calling context (the site's sizes go to the
    // column), then the tracer's offsets record of the same context: two writes a
    // repetition at irregular offsets, one size each. The record is taken event by event
    // (its first position's sizes may still be column entries), and every size and byte
    // comes back.
    let write = |start: u64, context: u32, offset: i64, size: u64| {
        positioned(2, start, 2, 0, offset, size, context)
    };
    let mut encoder = StreamEncoder::default();
    let mut events = Vec::new();
    for index in 0..40u64 {
        let event = write(index * 10, 1, index as i64 * 8192, 1024 + mix(index) % 7000);
        encoder.push(&event, class_of(2));
        events.push(event);
    }
    // Few enough that the site stays irregular throughout (4 sizes seen in a row make it
    // regular again, and the keys of the record would differ anyway).
    let repetitions = 3u64;
    let mut offsets = Vec::new();
    for repetition in 0..repetitions {
        let at = 1_000_000 + (mix(repetition + 500) % 1000) as i64 * 8192;
        let start = 1_000 + repetition * 20;
        events.push(write(start, 1, at, 4096));
        events.push(write(start + 5, 2, at + 4096, 512));
        offsets.extend([at, at + 4096]);
    }
    let body: Vec<BlockPosition> = events[40..42]
        .iter()
        .enumerate()
        .map(|(position, event)| {
            let (mut duration, mut gap) = (Stats::default(), Stats::default());
            for repetition in 0..repetitions as usize {
                duration.add(2);
                gap.add(if position == 0 && repetition == 0 {
                    618
                } else {
                    3
                });
            }
            BlockPosition {
                event: event.clone(),
                class: class_of(2),
                stride: 0,
                last_end: events[events.len() - 2 + position].end(),
                duration,
                gap,
            }
        })
        .collect();
    encoder.push_offsets(&body, &offsets, &[], repetitions);
    let stream = encoder.finish();
    let (decoded, expanded) = reread_and_expand(&stream);
    assert_eq!(expanded.len(), events.len());
    for (original, back) in events.iter().zip(&expanded) {
        assert_eq!(exact(original), exact(back));
    }
    let mut bytes = 0;
    for item in decoded.nodes().iter() {
        let mut leaves = vec![item];
        while let Some(item) = leaves.pop() {
            match item {
                Item::Leaf(leaf) => {
                    bytes += match &leaf.column_sizes {
                        Some(sizes) => sizes.sum,
                        None => leaf.key.request * leaf.occurrences(),
                    }
                }
                Item::Loop { body, count, .. } if count > 0 => leaves.extend(body.iter()),
                Item::Loop { .. } => {}
            }
        }
    }
    assert_eq!(bytes, events.iter().map(|event| event.request).sum::<u64>());
}

#[test]
fn checkpoint_loop_folds_to_a_constant_size() {
    let size = |steps: u64| {
        let mut encoder = StreamEncoder::default();
        let mut clock = 0;
        let mut push =
            |encoder: &mut StreamEncoder, call, file, handle, offset, request, context| {
                clock += 1000;
                let event = Event {
                    call,
                    start: clock,
                    duration: 500,
                    file: Some(file),
                    handle,
                    offset,
                    request,
                    result: request as i64,
                    errno: 0,
                    context,
                    aux: 0,
                    flags: 0,
                };
                encoder.push(&event, class_of(call));
            };
        for step in 0..steps {
            let file = 1 + step as u32;
            push(&mut encoder, 0, file, 3, -1, 0, 10);
            for block in 0..16 {
                push(&mut encoder, 2, file, 3, block * 65536, 65536, 11);
            }
            push(&mut encoder, 5, file, 3, -1, 0, 12);
            push(&mut encoder, 2, 0, 7, -1, 26, 13);
        }
        let tree = encoder.finish();
        assert_eq!(tree.count, steps * 19);
        tree.bytes().len()
    };
    // Only the counters (loop count, statistics counts) get wider varints.
    let (small, large) = (size(10), size(100_000));
    assert!(large - small < 64, "{small} -> {large}");
    assert!(large < 1024, "{large}");
}

#[test]
fn a_stream_over_its_budget_keeps_its_irregular_offsets_as_histograms() {
    // 100,000 reads at random offsets then a regular loop, with a budget of 16 KiB: the
    // first reads keep their offsets exactly (in the column) until the stream holds 16
    // KiB, the rest keep a histogram of them; the regular loop stays exact; counts and
    // bytes are exact throughout, every drawn offset within the range the reads had.
    let event = |index: u64| {
        let offset = if index < 100_000 {
            (mix(index) % 16_384) as i64 * 4096
        } else {
            (index - 100_000) as i64 * 4096
        };
        positioned(
            1,
            index * 10,
            5,
            0,
            offset,
            4096,
            1 + (index >= 100_000) as u32,
        )
    };
    let encode = |budget: Option<u64>| {
        let mut encoder = StreamEncoder::default();
        if let Some(budget) = budget {
            encoder.set_budget(budget);
        }
        for index in 0..101_000 {
            encoder.push(&event(index), class_of(1));
        }
        let degraded = encoder.degraded_after();
        (encoder.finish(), degraded)
    };
    let (exact_stream, never) = encode(None);
    assert_eq!(never, None);
    let (bounded, degraded) = encode(Some(16 * 1024));
    let after = degraded.expect("the budget was passed");
    assert!(
        (1_000..3_000).contains(&after),
        "degraded after {after} events"
    );
    // Exact, the column takes about 17 bits a read: 15 for the step (4 KiB-aligned, within
    // ±64 MiB), 2 for the access order.
    assert!(
        (200_000..230_000).contains(&exact_stream.bytes().len()),
        "{}",
        exact_stream.bytes().len()
    );
    assert!(
        bounded.bytes().len() < 20 * 1024,
        "{}",
        bounded.bytes().len()
    );
    let (_, expanded) = reread_and_expand(&bounded);
    assert_eq!(expanded.len(), 101_000);
    let bytes: u64 = expanded.iter().map(|event| event.result as u64).sum();
    assert_eq!(bytes, 101_000 * 4096);
    for (index, back) in expanded.iter().enumerate() {
        let original = event(index as u64);
        if (index as u64) < after || index >= 100_000 {
            assert_eq!(exact(back), exact(&original), "event {index}");
        } else {
            assert!((0..16_384 * 4096).contains(&back.offset), "event {index}");
        }
    }
}

#[test]
fn below_100_a_run_the_tracer_folded_blurs_as_its_events_would() {
    // Writes of 100 then 101 bytes (at precision 0 the site's size becomes a histogram),
    // then 50 more of 101 that the tracer folded into a run: the run's key is the blurred
    // one too, so the 51 writes of 101 are one loop with the write before them, and the
    // bytes stay exact.
    let write = |index: u64, size: u64| Event {
        call: 2,
        start: index * 10,
        duration: 5,
        file: Some(0),
        handle: 3,
        offset: -1,
        request: size,
        result: size as i64,
        errno: 0,
        context: 1,
        aux: 0,
        flags: 0,
    };
    let mut encoder = StreamEncoder::default();
    encoder.set_precision(0, 8);
    encoder.push(&write(0, 100), class_of(2));
    encoder.push(&write(1, 101), class_of(2));
    encoder.push(&write(2, 101), class_of(2));
    let mut duration = Stats::default();
    let mut gap = Stats::default();
    for _ in 0..49 {
        duration.add(5);
        gap.add(5);
    }
    encoder.push_run(
        &write(3, 101),
        class_of(2),
        49,
        0,
        51 * 10 + 5,
        duration,
        gap,
    );
    let stream = encoder.finish();
    let nodes = stream.nodes().to_nodes();
    // The first write (exact), then one loop of the 51 blurred ones.
    assert_eq!(nodes.len(), 2, "{nodes:?}");
    let Node::Loop {
        count: 51, body, ..
    } = &nodes[1]
    else {
        panic!("{nodes:?}")
    };
    let [Node::Leaf(leaf)] = &body[..] else {
        panic!("{body:?}")
    };
    assert_ne!(leaf.key.flags & BLURRED_SIZE, 0);
    let sizes = leaf.blurred.as_ref().and_then(|b| b.size.as_ref()).unwrap();
    assert_eq!((sizes.count, sizes.sum), (51, 51 * 101));
}

#[test]
fn tags_that_wander_blur_below_100_and_counting_tags_stay_exact() {
    // 600 sends to one peer: with tags that are task ids in no order (a master handing out
    // tasks), and with tags that count (tag = step). Lossless, the wandering tags keep a
    // leaf each; at precision 0 they become one histogram after the context's first 32
    // distinct tags (before, a changing tag may be a stencil's direction) and fold, each
    // drawn tag within their range; counting tags are steps, exact at every precision.
    let point_to_point = |_: u16| Some(CallClass::PointToPoint);
    let send = |index: u64, tag: u64| Event {
        call: 0,
        start: index * 10,
        duration: 5,
        file: None,
        handle: 0x55aa,
        offset: -1,
        request: 4000,
        result: 4000,
        errno: 0,
        context: 1,
        aux: 3 | tag << 32,
        flags: 0,
    };
    let encode = |precision: u8, tag: &dyn Fn(u64) -> u64| {
        let mut encoder = StreamEncoder::default();
        encoder.set_precision(precision, 8);
        for index in 0..600 {
            encoder.push(&send(index, tag(index)), point_to_point(0));
        }
        encoder.finish()
    };
    let wandering = |index: u64| 100 + mix(index) % 900;
    let counting = |index: u64| 7 + index;
    let lossless = encode(100, &wandering);
    let blurred = encode(0, &wandering);
    assert!(lossless.bytes().len() > 4 * blurred.bytes().len());
    let mut expanded = Vec::new();
    let decoded = EncodedStream::from_bytes(blurred.bytes().to_vec()).unwrap();
    decoded.expand(point_to_point, |event| expanded.push(event));
    assert_eq!(expanded.len(), 600);
    let (low, high) = (
        (0..600).map(wandering).min().unwrap(),
        (0..600).map(wandering).max().unwrap(),
    );
    for (index, event) in expanded.iter().enumerate() {
        assert_eq!((event.aux & 0xffff_ffff, event.request), (3, 4000));
        let tag = event.aux >> 32;
        if index < 32 {
            assert_eq!(tag, wandering(index as u64), "send {index}");
        } else {
            assert!((low..=high).contains(&tag), "send {index}: tag {tag}");
        }
    }
    let flagged = blurred
        .nodes()
        .to_nodes()
        .iter()
        .filter(|node| matches!(node, Node::Loop { body, .. } if matches!(&body[..], [Node::Leaf(leaf)] if leaf.key.flags & BLURRED_TAG != 0)))
        .count();
    assert_eq!(flagged, 1);
    for precision in [100, 0] {
        let stream = encode(precision, &counting);
        let (_, expanded) = {
            let decoded = EncodedStream::from_bytes(stream.bytes().to_vec()).unwrap();
            let mut expanded = Vec::new();
            decoded.expand(point_to_point, |event| expanded.push(event));
            (decoded, expanded)
        };
        let tags: Vec<u64> = expanded.iter().map(|event| event.aux >> 32).collect();
        assert_eq!(tags, (0..600).map(counting).collect::<Vec<_>>());
        // The first 32 tags a leaf each (a stencil's directions, for all the encoder
        // knows), then one loop of steps.
        let nodes = stream.nodes().to_nodes();
        assert_eq!(nodes.len(), 33, "precision {precision}");
        assert!(
            matches!(&nodes[32], Node::Loop { count: 568, body, .. } if matches!(&body[..], [Node::Leaf(leaf)] if leaf.key.flags & (TAG_STEP | BLURRED_TAG) == TAG_STEP)),
            "precision {precision}: {:?}",
            nodes[32]
        );
    }
}

/// Point-to-point events to the given peers (one call site), tag 7.
fn messages_to(peers: &[u64]) -> Vec<Event> {
    peers
        .iter()
        .enumerate()
        .map(|(index, peer)| Event {
            call: 0,
            start: 10 * index as u64,
            duration: 3,
            file: None,
            handle: 0x55,
            offset: -1,
            request: 2048,
            result: 2048,
            errno: 0,
            context: 1,
            aux: peer | 7 << 32,
            flags: 0,
        })
        .collect()
}

fn p2p(_: u16) -> Option<CallClass> {
    Some(CallClass::PointToPoint)
}

/// `events` of `rank` encoded, re-read and expanded: exactly the same, and the stream.
fn rank_round_trip(rank: i64, events: &[Event]) -> EncodedStream {
    let mut encoder = StreamEncoder::default();
    encoder.set_rank(Some(rank));
    for event in events {
        encoder.push(event, p2p(event.call));
    }
    let stream = EncodedStream::from_bytes(encoder.finish().bytes().to_vec()).unwrap();
    let mut expanded = Vec::new();
    stream.expand(p2p, |event| expanded.push(event));
    assert_eq!(expanded.len(), events.len());
    for (original, back) in events.iter().zip(&expanded) {
        assert_eq!(exact(original), exact(back), "rank {rank}");
    }
    stream
}

fn keys_of(stream: &EncodedStream) -> Vec<u32> {
    fn gather(body: Body, flags: &mut Vec<u32>) {
        for item in body.iter() {
            match item {
                Item::Leaf(leaf) => flags.push(leaf.key.flags & (PEER_DOUBLED | PEER_HALVED)),
                Item::Loop { body, .. } => gather(body, flags),
            }
        }
    }
    let mut flags = Vec::new();
    gather(stream.nodes(), &mut flags);
    flags
}

#[test]
fn recursive_doubling_partners_repeat_their_key_whatever_the_rounds() {
    // Rank 5's partners in recursive doubling on 4, 16 and 64 ranks (rank XOR 2^k), 20
    // iterations: the first round's peer as itself, the others doubled — one loop of
    // them, so the stream's structure does not grow with the rounds. Halving (2^k down)
    // likewise; two rounds (masks 1, 2, 1, 2…) never turn into a halving.
    let mut sizes = Vec::new();
    for rounds in [2u32, 4, 6] {
        let doubling: Vec<u64> = (0..20)
            .flat_map(|_| (0..rounds).map(|k| 5 ^ (1u64 << k)))
            .collect();
        let stream = rank_round_trip(5, &messages_to(&doubling));
        assert_eq!(keys_of(&stream), [0, PEER_DOUBLED], "{rounds} rounds");
        sizes.push(stream.bytes().len());
        let halving: Vec<u64> = (0..20)
            .flat_map(|_| (0..rounds).rev().map(|k| 5 ^ (1u64 << k)))
            .collect();
        let stream = rank_round_trip(5, &messages_to(&halving));
        assert_eq!(keys_of(&stream), [0, PEER_HALVED], "{rounds} rounds");
    }
    // The stream keeps its rank (one byte or two) and grows by a loop's count.
    assert!(sizes[2] <= sizes[0] + 4, "{sizes:?}");
    // Without a rank, peers stay themselves.
    let mut encoder = StreamEncoder::default();
    for event in messages_to(&[4, 7, 1, 13]) {
        encoder.push(&event, p2p(0));
    }
    let stream = EncodedStream::from_bytes(encoder.finish().bytes().to_vec()).unwrap();
    assert!(keys_of(&stream).iter().all(|flags| *flags == 0));
}

proptest! {
    #[test]
    fn any_peers_of_any_rank_come_back_as_they_were(
        rank in 0i64..70,
        peers in proptest::collection::vec(prop_oneof![0u64..70, Just(u32::MAX as u64), Just(u32::MAX as u64 - 1)], 0..60),
    ) {
        // Wildcards (−1) and MPI_PROC_NULL (−2) among them, chains that double, halve
        // and stop anywhere.
        rank_round_trip(rank, &messages_to(&peers));
    }
}

#[test]
fn below_100_receives_posted_for_changing_counts_fold_with_their_capacities_exact() {
    // A solver's halo receive, as LAMMPS posts it: MPI_Irecv for exactly the count the
    // neighbour sends, a new count every 20 steps, sometimes none (capacity 0); nothing
    // arrives at posting (result 0). Kept in the key, each count was a leaf of its own; at
    // precision 0 the capacities go to the leaf's histogram: one leaf, the capacities'
    // sum exact, each expanded receive posted for a capacity the histogram holds and
    // getting nothing.
    let point_to_point = |_: u16| Some(CallClass::PointToPoint);
    let capacity = |step: u64| {
        if step / 20 % 5 == 3 {
            0
        } else {
            3000 + mix(step / 20) % 300
        }
    };
    let receive = |step: u64| Event {
        call: 0,
        start: step * 10,
        duration: 5,
        file: None,
        handle: 0,
        offset: -1,
        request: capacity(step),
        result: 0,
        errno: 0,
        context: 1,
        aux: 2,
        flags: 0,
    };
    let encode = |precision: u8| {
        let mut encoder = StreamEncoder::default();
        encoder.set_precision(precision, 8);
        for step in 0..400 {
            encoder.push(&receive(step), point_to_point(0));
        }
        encoder.finish()
    };
    let lossless = encode(100);
    let blurred = encode(0);
    let sizes = (lossless.bytes().len(), blurred.bytes().len());
    assert!(sizes.0 > 3 * sizes.1, "{sizes:?}");
    let mut nodes = blurred.nodes().to_nodes();
    let mut leaves = Vec::new();
    crate::fold::for_each_leaf_mut(&mut nodes, &mut |leaf| leaves.push(leaf.clone()));
    // The first receive alone (its capacity a site's first value), then the rest.
    let capacities: Vec<&Leaf<EventKey>> = leaves
        .iter()
        .filter(|leaf| leaf.key.flags & BLURRED_CAPACITY != 0)
        .collect();
    assert_eq!(capacities.len(), 1, "{nodes:?}");
    let sizes = capacities[0]
        .blurred
        .as_ref()
        .and_then(|b| b.size.as_ref())
        .unwrap();
    let key = &capacities[0].key;
    assert_eq!((key.request, key.result(), key.bytes()), (0, 0, 0));
    let total: u64 = (0..400).map(capacity).sum();
    let alone: u64 = leaves
        .iter()
        .filter(|leaf| leaf.key.flags & BLURRED_CAPACITY == 0)
        .map(|leaf| leaf.key.request * leaf.duration.count)
        .sum();
    assert_eq!(sizes.sum as u64 + alone, total);
    let decoded = EncodedStream::from_bytes(blurred.bytes().to_vec()).unwrap();
    let mut expanded = Vec::new();
    decoded.expand(point_to_point, |event| expanded.push(event));
    assert_eq!(expanded.len(), 400);
    for event in &expanded {
        assert_eq!(event.result, 0);
        assert!(
            (sizes.min..=sizes.max).contains(&(event.request as i64))
                || event.request == capacity(0)
        );
    }
}

#[test]
fn a_block_that_begins_part_way_into_a_loop_folds_as_its_events_would() {
    // Reads then writes alternating (a, b): the builder folds the first ones into a loop
    // of (a, b); the tracer saw its block begin with b (its first exact repetition began
    // there), 25 repetitions of (b, a), then one b. As events they are one loop of 28
    // (a, b) after the file's first access; the block joins it (it was a loop of its own,
    // between a loop of 2 and an a), every statistic's count as many as its leaf occurred,
    // and the durations' total kept.
    let event = |call: u16, index: u64| Event {
        call,
        start: index * 10,
        duration: 3 + call as u64,
        file: Some(0),
        handle: 3,
        offset: -1,
        request: 100,
        result: 100,
        errno: 0,
        context: 1,
        aux: 0,
        flags: 0,
    };
    let (a, b) = (1u16, 2u16);
    let position = |call: u16| {
        let mut duration = Stats::default();
        let mut gap = Stats::default();
        for repetition in 0..25u64 {
            duration.add(3 + call as u64 + repetition % 2);
            gap.add(7);
        }
        BlockPosition {
            event: event(call, 0),
            class: class_of(call),
            stride: 0,
            last_end: 0,
            duration,
            gap,
        }
    };
    // The file's first access (a key of its own: its file not yet bound), a b a b a, the
    // block, and then `after`.
    let encode = |precision: u8, after: Option<u16>| {
        let mut encoder = StreamEncoder::default();
        encoder.set_precision(precision, 8);
        encoder.push(&event(a, 0), class_of(a));
        for index in 0..5 {
            let call = if index % 2 == 0 { a } else { b };
            encoder.push(&event(call, index + 1), class_of(call));
        }
        encoder.push_block(&[position(b), position(a)], 25);
        if let Some(call) = after {
            encoder.push(&event(call, 99), class_of(call));
        }
        encoder.finish().nodes().to_nodes()
    };
    for precision in [100u8, 0] {
        let nodes = encode(precision, Some(b));
        let [Node::Leaf(_), Node::Loop {
            count: 28, body, ..
        }] = &nodes[..]
        else {
            panic!("precision {precision}: {nodes:?}")
        };
        let [Node::Leaf(first), Node::Leaf(second)] = &body[..] else {
            panic!("{body:?}")
        };
        assert_eq!((first.key.call, second.key.call), (a, b));
        assert_eq!((first.duration.count, second.duration.count), (28, 28));
        assert_eq!((first.gap.count, second.gap.count), (28, 28));
        // 3 a's alone (4 ns each) and 25 in the block (12 of 5 ns, 13 of 4 ns).
        assert_eq!(
            first.duration.total().round() as u64,
            3 * 4 + 12 * 5 + 13 * 4
        );
        // The block last in the stream, or before another call: every leaf's statistics
        // count as many occurrences as the loops around it run it.
        for after in [None, Some(3u16)] {
            let nodes = encode(precision, after);
            let occurrences = statistics_as_structure(&nodes, 1);
            assert_eq!(
                occurrences,
                1 + 5 + 50 + after.is_some() as u64,
                "{nodes:?}"
            );
        }
    }
}

/// The occurrences `nodes` stand for, each run `runs` times, checking that every leaf's
/// statistics count as many as the loops around it run it.
fn statistics_as_structure(nodes: &[Node<EventKey>], runs: u64) -> u64 {
    nodes
        .iter()
        .map(|node| match node {
            Node::Leaf(leaf) => {
                assert_eq!(leaf.duration.count, runs, "{leaf:?}");
                assert_eq!(leaf.gap.count, runs, "{leaf:?}");
                runs
            }
            Node::Loop {
                count,
                body,
                counts,
            } => {
                assert!(counts.is_none());
                statistics_as_structure(body, runs * count)
            }
        })
        .sum()
}

/// The occurrences `nodes` stand for, each run `runs` times; a loop whose counts differ
/// runs its body as often as they add up to.
fn occurrences_with_histograms(nodes: &[Node<EventKey>], runs: u64) -> u64 {
    nodes
        .iter()
        .map(|node| match node {
            Node::Leaf(_) => runs,
            Node::Loop {
                counts: Some(counts),
                body,
                ..
            } => occurrences_with_histograms(body, counts.sum as u64),
            Node::Loop { count, body, .. } => occurrences_with_histograms(body, runs * count),
        })
        .sum()
}

/// A log line and a block of results a step, `repeats` times over: each run of `runs` is
/// that many steps whose line has that size (a step number of more digits), the line
/// appended to the log and the block to the results file.
fn stepping_with_lines(repeats: u64, runs: &[(u64, u64)]) -> Vec<Event> {
    let mut events = Vec::new();
    let (mut log_end, mut data_end, mut clock) = (0i64, 0i64, 0u64);
    let mut write = |file: u32, offset: i64, size: u64, context: u32| {
        clock += 7;
        events.push(positioned(2, clock, 3, file, offset, size, context));
    };
    for _ in 0..repeats {
        for (steps, size) in runs {
            for _ in 0..*steps {
                write(1, data_end, 4096, 2);
                data_end += 4096;
                write(0, log_end, *size, 1);
                log_end += *size as i64;
            }
        }
    }
    events
}

fn read_or_write(call: u16) -> Option<ColumnRole> {
    matches!(class_of(call), Some(CallClass::Read | CallClass::Write))
        .then_some(ColumnRole::Request)
}

#[test]
fn loops_whose_lines_grow_a_byte_merge_into_one() {
    // Steps 1–9, 10–99 and 100–199 of a log line of 19, 20 and 21 bytes: three loops of
    // the step, one once merged, the line's sizes in the column.
    let events = stepping_with_lines(1, &[(9, 19), (90, 20), (100, 21)]);
    let mut encoder = StreamEncoder::default();
    for event in &events {
        encoder.push(event, class_of(event.call));
    }
    let stream = encoder.finish();
    let loops = |nodes: &[Node<EventKey>]| {
        nodes
            .iter()
            .filter(|node| matches!(node, Node::Loop { .. }))
            .count()
    };
    assert_eq!(loops(&stream.nodes().to_nodes()), 3);
    let merged = stream.with_resized_loops_merged(&read_or_write).unwrap();
    let nodes = merged.nodes().to_nodes();
    assert_eq!(loops(&nodes), 1);
    // The first step (each file's first access) stays before the loop; the loop's line
    // takes a column entry every two steps (each size's run, 8, 90 and 100 steps, is a
    // multiple of two).
    assert!(merged.has_column_sizes());
    assert_eq!(merged.column().len(), 99);
    expands_to(&merged, &events, events.last().unwrap().end()).unwrap();
    assert_eq!(requested_bytes(&merged), requested_bytes(&stream));
    // The same three times over (a run restarted): merged, the loop inside the loop of
    // repeats would walk its column again each time, 297 entries against the three loops'
    // keys — larger, so the stream stays as the folder made it (the merges are kept only
    // when smaller; the proptest below expands those of other runs).
    let events = stepping_with_lines(3, &[(9, 19), (90, 20), (100, 21)]);
    let mut encoder = StreamEncoder::default();
    for event in &events {
        encoder.push(event, class_of(event.call));
    }
    assert!(encoder
        .finish()
        .with_resized_loops_merged(&read_or_write)
        .is_none());
    // Nothing to merge: no new stream.
    let mut encoder = StreamEncoder::default();
    for event in &stepping_with_lines(1, &[(50, 19)]) {
        encoder.push(event, class_of(event.call));
    }
    assert!(encoder
        .finish()
        .with_resized_loops_merged(&read_or_write)
        .is_none());
}

proptest! {
    #[test]
    fn loops_merged_for_their_sizes_expand_to_their_events(
        repeats in 1u64..4,
        runs in proptest::collection::vec((1u64..30, 18u64..22), 1..6),
    ) {
        let events = stepping_with_lines(repeats, &runs);
        let mut encoder = StreamEncoder::default();
        for event in &events {
            encoder.push(event, class_of(event.call));
        }
        let stream = encoder.finish();
        if let Some(merged) = stream.with_resized_loops_merged(&read_or_write) {
            expands_to(&merged, &events, events.last().unwrap().end())?;
            prop_assert_eq!(requested_bytes(&merged), requested_bytes(&stream));
            prop_assert!(merged.nodes().to_nodes().len() <= stream.nodes().to_nodes().len());
        }
    }
}

/// A key's result is written as a code that gives "moved nothing" one byte: every pair of
/// request and result round-trips, the edges included, and a posting's costs one byte.
#[test]
fn result_codes_round_trip_and_nothing_costs_a_byte() {
    let edges = [
        0u64,
        1,
        2,
        3,
        4096,
        11040,
        i64::MAX as u64,
        1 << 63,
        u64::MAX,
    ];
    let results = [0i64, 1, -1, 2, -2, 4095, -4096, -11040, i64::MIN, i64::MAX];
    for request in edges {
        for result in results
            .iter()
            .copied()
            .chain([(request as i64).wrapping_neg()])
        {
            let code = result_code(request, result);
            assert_eq!(result_of_code(request, code), result, "{request} {result}");
        }
        if request != 0 {
            assert_eq!(result_code(request, (request as i64).wrapping_neg()), 1);
        }
    }
    assert_eq!(result_code(4096, 0), 0);
}

proptest! {
    #[test]
    fn result_codes_are_a_bijection(request in any::<u64>(), result in any::<i64>(), code in any::<u64>()) {
        prop_assert_eq!(result_of_code(request, result_code(request, result)), result);
        prop_assert_eq!(result_code(request, result_of_code(request, code)), code);
    }
}

/// IOR's HDF5 backend, a dataset per segment (`tests/programs/patterns/dataset_per_segment.c`):
/// each segment's four transfers (an `H5Dwrite` and its `pwrite` under it), the dataset's
/// close and the next one's create; the next segment's data starts past the other ranks'
/// blocks, 2 KiB further when HDF5 allocated a metadata block in between (in no period).
/// From segment `folded` on, the segments come as the tracer folds them: each run of
/// segments whose data moves by one stride a block of one segment's calls.
fn dataset_per_segment(segments: u64, folded: Option<u64>) -> (EncodedStream, Vec<Event>) {
    let gaps = [3u64, 5, 5, 4, 6, 6, 3, 5, 6, 6, 5, 6, 6];
    let mut jitters = Vec::new();
    for gap in gaps.iter().cycle() {
        jitters.extend(std::iter::repeat_n(0i64, *gap as usize - 1));
        jitters.push(2048);
        if jitters.len() as u64 >= segments {
            break;
        }
    }
    let (transfer, others) = (16_384i64, 3 * 65_536i64);
    let (write, pwrite, close, create) = (40u16, 2u16, 41u16, 42u16);
    let mut clock = 0u64;
    // A pwrite at its offset, or an HDF5 call (no offset, the dataset's numbered id).
    let mut call = |call: u16, offset: i64, context: u32, size: u64| {
        clock += 10;
        let event = positioned(call, clock, 3, 0, offset.max(0), size, context);
        if offset >= 0 {
            event
        } else {
            Event {
                handle: 1 << 34,
                offset,
                flags: 0,
                ..event
            }
        }
    };
    let mut start = 0i64;
    let mut segment_events = Vec::new();
    for segment in 0..segments {
        let mut body = Vec::new();
        for transfer_index in 0..4 {
            body.push(call(
                pwrite,
                start + transfer_index * transfer,
                5,
                transfer as u64,
            ));
            body.push(call(write, -1, 6, transfer as u64));
        }
        body.push(call(close, -1, 7, 0));
        body.push(call(create, -1, 8, 0));
        start += 4 * transfer + others + jitters[segment as usize];
        segment_events.push(body);
    }
    let events: Vec<Event> = segment_events.iter().flatten().cloned().collect();
    let class = |call: u16| match call {
        2 => Some(CallClass::Write),
        _ => None,
    };
    let mut blocks = Vec::new();
    let mut from = folded.unwrap_or(segments);
    while from + 1 < segments {
        // Segments from..from + count move by one stride.
        let count = 1
            + (from..segments - 1)
                .take_while(|segment| jitters[*segment as usize] == jitters[from as usize])
                .count() as u64;
        blocks.push((from, count));
        from += count;
    }
    let mut encoder = StreamEncoder::default();
    let mut segment = 0u64;
    while segment < segments {
        match blocks.iter().find(|(from, _)| *from == segment) {
            Some((_, count)) => {
                let body = &segment_events[segment as usize];
                let next = &segment_events[segment as usize + 1];
                let positions: Vec<BlockPosition> = body
                    .iter()
                    .zip(next)
                    .map(|(first, second)| {
                        let stride = if first.offset >= 0 {
                            second.offset - first.offset
                        } else {
                            0
                        };
                        staged_position(first, class(first.call), stride, *count, (3, 7))
                    })
                    .collect();
                encoder.push_block(&positions, *count);
                segment += count;
            }
            None => {
                for event in &segment_events[segment as usize] {
                    encoder.push(event, class(event.call));
                }
                segment += 1;
            }
        }
    }
    (encoder.finish(), events)
}

#[test]
fn datasets_whose_starts_jitter_fold_as_one_loop() {
    for blocks in [None, Some(30)] {
        let (stream, events) = dataset_per_segment(100, blocks);
        let (_, expanded) = reread_and_expand(&stream);
        assert_eq!(expanded.len(), events.len());
        for (original, back) in events.iter().zip(&expanded) {
            assert_eq!(original.offset, back.offset);
            assert_eq!(original.call, back.call);
        }
        // After a score of segments the jumps are seen to jitter: one loop of the rest,
        // its pwrite's offset in the column.
        let nodes = stream.nodes().to_nodes();
        let segments_loop = nodes.iter().find_map(|node| match node {
            Node::Loop { count, body, .. } if *count >= 70 => Some(body.clone()),
            _ => None,
        });
        let Some(body) = segments_loop else {
            panic!("{blocks:?}: {nodes:?}")
        };
        let columned = body
            .iter()
            .filter(|node| matches!(node, Node::Leaf(leaf) if leaf.key.offset == OffsetRef::Column))
            .count();
        assert_eq!(columned, 1, "{body:?}");
    }
}

#[test]
fn two_streams_of_their_own_sizes_at_one_site_fold_by_their_own_strides() {
    // patterns/indexed_records.c's read-back: a 16-byte index entry, then its 4 KiB
    // record, through one pread site; from the 40th record on as the tracer folds them
    // (a block of the pair, each position its own stride), or one by one.
    let records = 200i64;
    let data = 16 * records;
    let mut events = Vec::new();
    for i in 0..records {
        events.push(positioned(1, 100 * i as u64, 3, 0, 16 * i, 16, 7));
        events.push(positioned(
            1,
            100 * i as u64 + 50,
            3,
            0,
            data + 4096 * i,
            4096,
            7,
        ));
    }
    for folded_from in [None, Some(40usize)] {
        let mut encoder = StreamEncoder::default();
        let until = folded_from.unwrap_or(events.len() / 2);
        for event in &events[..2 * until] {
            encoder.push(event, class_of(event.call));
        }
        if folded_from.is_some() {
            let count = records as u64 - until as u64;
            let positions: Vec<BlockPosition> = events[2 * until..2 * until + 2]
                .iter()
                .map(|first| {
                    let stride = first.request as i64;
                    staged_position(first, class_of(first.call), stride, count, (3, 47))
                })
                .collect();
            encoder.push_block(&positions, count);
        }
        let stream = encoder.finish();
        let (_, expanded) = reread_and_expand(&stream);
        assert_eq!(expanded.len(), events.len());
        for (original, back) in events.iter().zip(&expanded) {
            assert_eq!(exact(original), exact(back));
        }
        let nodes = stream.nodes().to_nodes();
        let looped = nodes.iter().find_map(|node| match node {
            Node::Loop { count, body, .. } => Some((*count, body.clone())),
            Node::Leaf(_) => None,
        });
        let Some((count, body)) = looped else {
            panic!("{folded_from:?}: {nodes:?}")
        };
        assert!(count >= records as u64 - 3, "{folded_from:?}: {nodes:?}");
        let offsets: Vec<OffsetRef> = body
            .iter()
            .map(|node| match node {
                Node::Leaf(leaf) => leaf.key.offset,
                Node::Loop { .. } => OffsetRef::Unknown,
            })
            .collect();
        assert_eq!(offsets, [OffsetRef::OwnDelta(0), OffsetRef::OwnDelta(0)]);
    }
}

/// A block's position as the tracer stages it: `first` moving by `stride`, `count`
/// repetitions each of the same (duration, gap).
fn staged_position(
    first: &Event,
    class: Option<CallClass>,
    stride: i64,
    count: u64,
    (each, before): (u64, u64),
) -> BlockPosition {
    let mut duration = Stats::default();
    let mut gap = Stats::default();
    for _ in 0..count {
        duration.add(each);
        gap.add(before);
    }
    BlockPosition {
        event: first.clone(),
        class,
        stride,
        last_end: 0,
        duration,
        gap,
    }
}

/// Calls of [`ghost_exchange`]: a posted receive, a send, a completion and the exchange of
/// counts at each rebuild.
fn ghost_class(call: u16) -> Option<CallClass> {
    match call {
        0 | 1 | 3 => Some(CallClass::PointToPoint),
        2 => Some(CallClass::Completion),
        _ => None,
    }
}

fn ghost_role(call: u16) -> Option<ColumnRole> {
    match call {
        0 => Some(ColumnRole::Capacity),
        1 => Some(ColumnRole::Request),
        2 => Some(ColumnRole::Result),
        _ => None,
    }
}

/// LAMMPS's halo exchange in miniature (`patterns/md_ghosts.c`): every step, per swap,
/// `MPI_Irecv` posted for exactly the count the neighbour sends, `MPI_Send`, `MPI_Wait`;
/// every `period` steps a rebuild — the counts exchanged (a constant 4-byte message), the
/// migrating atoms sent — after which every swap's counts are new ones.
fn ghost_exchange(periods: u64, period: u64) -> Vec<Event> {
    let mut events = Vec::new();
    let mut clock = 0;
    let mut push = |call: u16, request: u64, result: i64, peer: u64, context: u32| {
        clock += 10;
        events.push(Event {
            call,
            start: clock,
            duration: 3,
            file: None,
            handle: 0,
            offset: -1,
            request,
            result,
            errno: 0,
            context,
            aux: peer,
            flags: 0,
        });
    };
    for rebuild in 0..periods {
        for swap in 0..2u64 {
            push(3, 4, 4, swap + 1, 5);
            let migrants = 100 + mix(rebuild * 7 + swap) % 50;
            push(0, migrants, 0, swap + 1, 6);
            push(1, 96 + mix(rebuild * 5 + swap) % 50, 0, swap + 1, 7);
            push(2, 0, migrants as i64, swap + 1, 8);
        }
        for _ in 0..period {
            for swap in 0..2u64 {
                let count = 3000 + mix(rebuild * 3 + swap) % 300;
                push(0, count, 0, swap + 1, 1);
                push(1, 3000 + mix(rebuild * 11 + swap) % 300, 0, swap + 1, 2);
                push(2, 0, count as i64, swap + 1, 3);
            }
        }
    }
    // A send's result is its size; a posted receive's 0.
    for event in &mut events {
        if event.call == 1 {
            event.result = event.request as i64;
        }
    }
    events
}

#[test]
fn halo_exchanges_whose_counts_change_at_each_rebuild_fold_with_their_counts_exact() {
    // Each rebuild period is the same calls with other message sizes: the folder made a
    // loop of the period's steps and left the rebuilds apart, every period's keys new.
    // Merged, the periods are one loop; each message's size (a receive's capacity, a
    // send's size, a completion's received bytes) is a column entry a period, not a call.
    let (periods, period) = (40, 19);
    let events = ghost_exchange(periods, period);
    let mut encoder = StreamEncoder::default();
    for event in &events {
        encoder.push(event, ghost_class(event.call));
    }
    let stream = encoder.finish();
    assert!(stream.nodes().to_nodes().len() >= periods as usize);
    let merged = stream.with_resized_loops_merged(&ghost_role).unwrap();
    let nodes = merged.nodes().to_nodes();
    assert!(nodes.len() <= 2, "{nodes:?}");
    // Per period: the rebuild's 6 sized calls, and 6 of the steps' calls, an entry each.
    assert_eq!(merged.column().len(), periods * 12);
    assert!(merged.bytes().len() * 4 < stream.bytes().len());
    let decoded = EncodedStream::from_bytes(merged.bytes().to_vec()).unwrap();
    let mut expanded = Vec::new();
    decoded.expand(ghost_class, |event| expanded.push(event));
    assert_eq!(expanded.len(), events.len());
    for (original, back) in events.iter().zip(&expanded) {
        assert_eq!(exact(original), exact(back));
    }
}
