//! Box-level edits of a finished MP4 that the `mp4` crate's writer does not make: BT.709 colour
//! tags on the H.264 sample entry, the edit list that starts a reordered (B-frame) stream at its
//! first shown picture, the movie header's next track id, and fast start (the `moov` box moved
//! before `mdat`, so a player starts while the file downloads).

use crate::MediaError;

/// Header size of a plain box.
const HEADER: usize = 8;
/// Where the children of a box start, counted from the box's start: full boxes and sample
/// entries carry fields before their children.
const STSD_CHILDREN: usize = HEADER + 8;
const VISUAL_SAMPLE_ENTRY_CHILDREN: usize = HEADER + 78;

/// The BT.709 `colr` box (ISO/IEC 14496-12 `nclx`: primaries, transfer and matrix 1, limited
/// range), as players and platforms expect of HD video.
const COLR_BT709: [u8; 19] = [0, 0, 0, 19, b'c', b'o', b'l', b'r', b'n', b'c', b'l', b'x', 0, 1, 0, 1, 0, 1, 0];

/// A box's kind and its byte range (header included).
#[derive(Clone, Copy, Debug)]
struct BoxRange {
    kind: [u8; 4],
    start: usize,
    end: usize,
}

/// The boxes laid end to end in `file[start..end]`; stops at the first malformed header.
fn children(file: &[u8], start: usize, end: usize) -> Vec<BoxRange> {
    let mut boxes = Vec::new();
    let mut pos = start;
    while pos + HEADER <= end {
        let Some(size) = file.get(pos..pos + 4).and_then(|b| b.try_into().ok()).map(u32::from_be_bytes) else {
            break;
        };
        let size = size as usize;
        if size < HEADER || pos + size > end {
            break;
        }
        let mut kind = [0u8; 4];
        kind.copy_from_slice(&file[pos + 4..pos + 8]);
        boxes.push(BoxRange { kind, start: pos, end: pos + size });
        pos += size;
    }
    boxes
}

fn child(file: &[u8], parent: BoxRange, offset: usize, kind: &[u8; 4]) -> Option<BoxRange> {
    children(file, parent.start + offset, parent.end).into_iter().find(|b| &b.kind == kind)
}

fn top_level(file: &[u8], kind: &[u8; 4]) -> Option<BoxRange> {
    children(file, 0, file.len()).into_iter().find(|b| &b.kind == kind)
}

/// The chain moov > trak > mdia > minf > stbl > stsd > avc1 of the first H.264 track.
fn avc1_chain(file: &[u8]) -> Option<Vec<BoxRange>> {
    let moov = top_level(file, b"moov")?;
    children(file, moov.start + HEADER, moov.end).into_iter().filter(|b| &b.kind == b"trak").find_map(|trak| {
        let mdia = child(file, trak, HEADER, b"mdia")?;
        let minf = child(file, mdia, HEADER, b"minf")?;
        let stbl = child(file, minf, HEADER, b"stbl")?;
        let stsd = child(file, stbl, HEADER, b"stsd")?;
        let avc1 = child(file, stsd, STSD_CHILDREN, b"avc1")?;
        Some(vec![moov, trak, mdia, minf, stbl, stsd, avc1])
    })
}

/// Boxes whose children are boxes, and where their children start.
const CONTAINERS: [(&[u8; 4], usize); 15] = [
    (b"moov", HEADER),
    (b"trak", HEADER),
    (b"mdia", HEADER),
    (b"minf", HEADER),
    (b"stbl", HEADER),
    (b"edts", HEADER),
    (b"dinf", HEADER),
    (b"mvex", HEADER),
    (b"moof", HEADER),
    (b"traf", HEADER),
    (b"udta", HEADER),
    (b"meta", HEADER + 4),
    (b"stsd", STSD_CHILDREN),
    (b"avc1", VISUAL_SAMPLE_ENTRY_CHILDREN),
    (b"mp4a", HEADER + 28),
];

/// Deepest nesting of boxes accepted.
const MAX_DEPTH: usize = 12;

/// Checks that the boxes of an untrusted file tile exactly: every box at least a header long and
/// inside its parent, down through every container. Fuzzing found that the `mp4` crate's parser
/// loops forever on a box that overruns its parent, and allocates whatever a `meta` child claims
/// (4 GB from a 3 KB file), so files are checked before it sees them.
pub(crate) fn check_structure(file: &[u8]) -> Result<(), MediaError> {
    check_boxes(file, 0, file.len(), 0, true)
}

fn check_boxes(file: &[u8], start: usize, end: usize, depth: usize, top: bool) -> Result<(), MediaError> {
    let bad = |what: String| Err(MediaError::Decode(format!("malformed MP4: {what}")));
    if depth > MAX_DEPTH {
        return bad("boxes nested too deep".into());
    }
    let mut pos = start;
    while pos < end {
        if end - pos < HEADER {
            return bad(format!("{} stray bytes at {pos}", end - pos));
        }
        let size32 = u32::from_be_bytes([file[pos], file[pos + 1], file[pos + 2], file[pos + 3]]);
        let kind: [u8; 4] = [file[pos + 4], file[pos + 5], file[pos + 6], file[pos + 7]];
        let size = match size32 {
            // To the end of the file: only the last top-level box may say so.
            0 if top => end - pos,
            1 => {
                let Some(large) = file.get(pos + 8..pos + 16) else {
                    return bad(format!("truncated box header at {pos}"));
                };
                let large = u64::from_be_bytes(large.try_into().unwrap_or_default());
                usize::try_from(large).unwrap_or(usize::MAX)
            }
            n => n as usize,
        };
        if size < HEADER || size > end - pos {
            return bad(format!(
                "box {:?} at {pos} claims {size} bytes; {} are left",
                String::from_utf8_lossy(&kind),
                end - pos
            ));
        }
        if let Some((_, offset)) = CONTAINERS.iter().find(|(k, _)| **k == kind) {
            if *offset > size {
                return bad(format!("box {:?} at {pos} is too short", String::from_utf8_lossy(&kind)));
            }
            check_boxes(file, pos + offset, pos + size, depth + 1, false)?;
        }
        pos += size;
    }
    Ok(())
}

/// Appends the BT.709 `colr` box to the H.264 sample entry, growing every enclosing box.
pub(crate) fn tag_bt709(file: &mut Vec<u8>) -> Result<(), MediaError> {
    let chain = avc1_chain(file).ok_or_else(|| MediaError::Encode("MP4 has no avc1 sample entry to tag".into()))?;
    let avc1 = chain[chain.len() - 1];
    if child(file, avc1, VISUAL_SAMPLE_ENTRY_CHILDREN, b"colr").is_some() {
        return Ok(());
    }
    file.splice(avc1.end..avc1.end, COLR_BT709);
    for ancestor in &chain {
        grow(file, ancestor.start, COLR_BT709.len())?;
    }
    // Chunk offsets point past the moov when it comes after mdat, so they are unchanged; a
    // moov before mdat is moved by `fast_start` only after tagging.
    Ok(())
}

/// Gives the first H.264 track an edit list that shows its media from `media_time` (in the
/// track's timescale) for `duration` (in the movie's), so that a stream whose first picture is
/// shown after B-frames' reordering delay still starts at time zero, in step with its audio.
pub(crate) fn add_edit_list(file: &mut Vec<u8>, media_time: u32, duration: u32) -> Result<(), MediaError> {
    let chain = avc1_chain(file).ok_or_else(|| MediaError::Encode("MP4 has no H.264 track to edit".into()))?;
    let (moov, trak) = (chain[0], chain[1]);
    if child(file, trak, HEADER, b"edts").is_some() {
        return Err(MediaError::Encode("the H.264 track already has an edit list".into()));
    }
    let tkhd = child(file, trak, HEADER, b"tkhd").ok_or_else(|| MediaError::Encode("MP4 track has no tkhd".into()))?;
    let mut edts = Vec::with_capacity(36);
    edts.extend_from_slice(&36u32.to_be_bytes());
    edts.extend_from_slice(b"edts");
    edts.extend_from_slice(&28u32.to_be_bytes());
    edts.extend_from_slice(b"elst");
    edts.extend_from_slice(&0u32.to_be_bytes()); // version 0, no flags
    edts.extend_from_slice(&1u32.to_be_bytes()); // one entry
    edts.extend_from_slice(&duration.to_be_bytes());
    edts.extend_from_slice(&media_time.to_be_bytes());
    edts.extend_from_slice(&[0, 1, 0, 0]); // rate 1.0
    let len = edts.len();
    file.splice(tkhd.end..tkhd.end, edts);
    grow(file, moov.start, len)?;
    grow(file, trak.start, len)
}

fn grow(file: &mut [u8], start: usize, by: usize) -> Result<(), MediaError> {
    let size = u32::from_be_bytes([file[start], file[start + 1], file[start + 2], file[start + 3]]);
    let grown = u32::try_from(size as usize + by).map_err(|_| MediaError::Encode("MP4 box too large".into()))?;
    file[start..start + 4].copy_from_slice(&grown.to_be_bytes());
    Ok(())
}

/// Whether the H.264 sample entry carries the BT.709 `colr` tag.
pub(crate) fn is_tagged_bt709(file: &[u8]) -> bool {
    avc1_chain(file)
        .and_then(|chain| child(file, chain[chain.len() - 1], VISUAL_SAMPLE_ENTRY_CHILDREN, b"colr"))
        .is_some_and(|colr| file.get(colr.start + 8..colr.end) == Some(&COLR_BT709[8..]))
}

/// Sets `mvhd.next_track_id` (the `mp4` crate leaves it at 1, which collides with its first
/// track; strict validators flag that).
pub(crate) fn set_next_track_id(file: &mut [u8], next_id: u32) {
    let Some(moov) = top_level(file, b"moov") else {
        return;
    };
    if let Some(mvhd) = child(file, moov, HEADER, b"mvhd") {
        if mvhd.end >= mvhd.start + 12 {
            file[mvhd.end - 4..mvhd.end].copy_from_slice(&next_id.to_be_bytes());
        }
    }
}

/// Whether `moov` comes before `mdat`.
pub(crate) fn is_fast_start(file: &[u8]) -> bool {
    let boxes = children(file, 0, file.len());
    let at = |kind: &[u8; 4]| boxes.iter().position(|b| &b.kind == kind);
    matches!((at(b"moov"), at(b"mdat")), (Some(moov), Some(mdat)) if moov < mdat)
}

/// Moves `moov` to just after `ftyp` and shifts every chunk offset (`stco`, `co64`) by its size.
pub(crate) fn fast_start(file: Vec<u8>) -> Result<Vec<u8>, MediaError> {
    if is_fast_start(&file) {
        return Ok(file);
    }
    let boxes = children(&file, 0, file.len());
    let moov = boxes
        .iter()
        .copied()
        .find(|b| &b.kind == b"moov")
        .ok_or_else(|| MediaError::Encode("MP4 has no moov box".into()))?;
    let insert_at = boxes.iter().find(|b| &b.kind == b"ftyp").map_or(0, |f| f.end);
    let shift = moov.end - moov.start;
    let mut moved = file[moov.start..moov.end].to_vec();
    shift_chunk_offsets(&mut moved, shift)?;
    let mut out = Vec::with_capacity(file.len());
    out.extend_from_slice(&file[..insert_at]);
    out.extend_from_slice(&moved);
    out.extend_from_slice(&file[insert_at..moov.start]);
    out.extend_from_slice(&file[moov.end..]);
    Ok(out)
}

/// Adds `shift` to every chunk offset in a `moov` box held alone in `moov`.
fn shift_chunk_offsets(moov: &mut [u8], shift: usize) -> Result<(), MediaError> {
    let root = BoxRange { kind: *b"moov", start: 0, end: moov.len() };
    let mut tables = Vec::new();
    for trak in children(moov, HEADER, root.end).into_iter().filter(|b| &b.kind == b"trak") {
        let stbl = child(moov, trak, HEADER, b"mdia")
            .and_then(|mdia| child(moov, mdia, HEADER, b"minf"))
            .and_then(|minf| child(moov, minf, HEADER, b"stbl"));
        if let Some(stbl) = stbl {
            tables.extend(
                children(moov, stbl.start + HEADER, stbl.end)
                    .into_iter()
                    .filter(|b| &b.kind == b"stco" || &b.kind == b"co64"),
            );
        }
    }
    let overflow = || MediaError::Encode("MP4 chunk offset overflows".into());
    for table in tables {
        let wide = &table.kind == b"co64";
        let width = if wide { 8 } else { 4 };
        let entries = table.start + HEADER + 8;
        let count = moov
            .get(table.start + HEADER + 4..entries)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_be_bytes)
            .ok_or_else(|| MediaError::Encode("truncated chunk offset table".into()))? as usize;
        if entries + count * width > table.end {
            return Err(MediaError::Encode("truncated chunk offset table".into()));
        }
        for entry in moov[entries..entries + count * width].chunks_exact_mut(width) {
            if wide {
                let value = u64::from_be_bytes(entry.try_into().map_err(|_| overflow())?);
                let shifted = value.checked_add(shift as u64).ok_or_else(overflow)?;
                entry.copy_from_slice(&shifted.to_be_bytes());
            } else {
                let value = u32::from_be_bytes(entry.try_into().map_err(|_| overflow())?);
                let shifted = u32::try_from(value as usize + shift).map_err(|_| overflow())?;
                entry.copy_from_slice(&shifted.to_be_bytes());
            }
        }
    }
    Ok(())
}
