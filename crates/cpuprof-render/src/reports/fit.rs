//! Tables fitted to a terminal's width: the number columns as they are, the name and location
//! columns sharing the rest. Locations are shortened first (relative to the current directory,
//! then their folders' middle, then to `file:line`), then names lose their middle; neither goes
//! below a readable minimum (a line that still cannot fit wraps, as it would have).

use crate::text::{columns, truncate_middle};

/// The widest a function's cell in the timeline's and blocks' tables gets.
pub(crate) const NAME_WIDTH: usize = 60;

/// The narrowest a name is cut to.
pub(crate) const NAME_MIN: usize = 16;

/// The narrowest a location is cut to.
pub(crate) const LOCATION_MIN: usize = 14;

/// A location narrower than this keeps only its file and line (no folders cut in the middle).
const FOLDERS_MIN: usize = 28;

/// Where a text report is shown: how wide it may be, the directory its paths are shown
/// relative to when they must be shortened, and whether it may have colour.
#[derive(Clone, Copy, Debug, Default)]
pub struct Terminal<'a> {
    /// The terminal's width in columns; `None`: no limit (a file, a pipe, `--wide`).
    pub width: Option<usize>,
    /// The current directory, as paths in the profile spell it.
    pub cwd: Option<&'a str>,
    /// Colour with meaning (a person at a terminal, without `NO_COLOR`).
    pub color: bool,
}

/// The width of a table of comfy-table's `UTF8_BORDERS_ONLY` preset whose cells are `cells`
/// wide: `│ a   b │`, a padding column each side of a cell and a blank between cells.
pub(crate) fn table_columns(cells: &[usize]) -> usize {
    2 + cells.iter().map(|w| w + 2).sum::<usize>() + cells.len().saturating_sub(1)
}

/// How wide a table's name and location columns may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Budget {
    pub(crate) name: usize,
    pub(crate) location: usize,
}

impl Budget {
    /// The name and location columns (`location` 0: the table has none) of a table whose other
    /// columns are `fixed` wide, fitted to `width`; `None` without a width (no limit).
    /// `location` is its widest cell and the widest `file:line` form of its cells.
    ///
    /// When both do not fit, the names stay whole if the locations can keep their `file:line`
    /// form beside them (what tells two rows apart is a name, or a file: `batch_v1.js:7` from
    /// `batch_v2.js:7`); else the location keeps that form while the name can give room (a tick
    /// log's long C++ names once took 150 of 200 columns and left 14 to locations), and neither
    /// goes below its minimum.
    pub(crate) fn of(
        width: Option<usize>,
        fixed: &[usize],
        name: usize,
        location: Option<(usize, usize)>,
    ) -> Option<Self> {
        let width = width?;
        let mut cells = fixed.to_vec();
        cells.push(0);
        if location.is_some() {
            cells.push(0);
        }
        let room = width.saturating_sub(table_columns(&cells));
        let (location, short) = location.unwrap_or((0, 0));
        if name + location <= room {
            return Some(Self { name, location });
        }
        if location == 0 {
            return Some(Self { name: room.max(name.min(NAME_MIN)), location: 0 });
        }
        let short = short.min(location);
        if name + short <= room {
            return Some(Self { name, location: room - name });
        }
        // Else the room is shared in proportion to the names and the file:line forms.
        let name_floor = name.min(NAME_MIN);
        let share = room * short / (name + short).max(1);
        let location = share.min(room.saturating_sub(name_floor)).max(location.min(LOCATION_MIN));
        let name = room.saturating_sub(location).max(name_floor);
        Some(Self { name, location })
    }

    /// The widest `file:line[:column]` form of `locations` (their last path component).
    pub(crate) fn short_location<'s>(locations: impl Iterator<Item = &'s str>) -> usize {
        locations.map(|l| columns(l.rsplit(['/', '\\']).next().unwrap_or(l))).max().unwrap_or(0)
    }

    /// Whether a table whose other columns are `fixed` wide leaves its name and location
    /// columns (`name` and `location` wide at most) their minimum in `width`.
    pub(crate) fn fits(width: Option<usize>, fixed: &[usize], name: usize, location: Option<usize>) -> bool {
        let Some(width) = width else { return true };
        let mut cells = fixed.to_vec();
        cells.push(name.min(NAME_MIN));
        cells.extend(location.map(|l| l.min(LOCATION_MIN)));
        table_columns(&cells) <= width
    }
}

/// The widths of a table's columns, fitted to `width` (`None`: as wide as their cells): the first
/// `fixed` columns keep theirs; the text columns after them share the room — each at least its
/// header (or 12), the rest given in the order of `priority` (indices among the text columns:
/// what tells rows apart first) up to what each needs; a text column that cannot have its minimum
/// is dropped (width 0), the last in `priority` first.
pub(crate) fn text_columns<const N: usize>(
    width: Option<usize>,
    head: &[&str; N],
    rows: &[[String; N]],
    fixed: usize,
    priority: &[usize],
) -> Vec<usize> {
    let need: Vec<usize> =
        (0..N).map(|k| rows.iter().map(|r| columns(&r[k])).chain([columns(head[k])]).max().unwrap_or(0)).collect();
    let Some(width) = width else { return need };
    let mut shown: Vec<usize> = (fixed..N).collect();
    loop {
        let cells: Vec<usize> = (0..fixed).map(|k| need[k]).chain(shown.iter().map(|_| 0)).collect();
        let room = width.saturating_sub(table_columns(&cells));
        let floor = |k: usize| need[k].min(columns(head[k]).max(12));
        let floors: usize = shown.iter().map(|k| floor(*k)).sum();
        if floors <= room || shown.len() <= 1 {
            let mut widths: Vec<usize> = (0..N).map(|k| if k < fixed { need[k] } else { 0 }).collect();
            let mut left = room.saturating_sub(floors);
            for k in &shown {
                widths[*k] = floor(*k);
            }
            // The first in `priority` gets what it needs; the room left above the floors is
            // shared among the others in proportion to what each still needs, what is left of the
            // rounding in the order of `priority`.
            if let Some(k) = priority.first().map(|p| fixed + p).filter(|k| shown.contains(k)) {
                let more = need[k].saturating_sub(widths[k]).min(left);
                widths[k] += more;
                left -= more;
            }
            let wants: usize = shown.iter().map(|k| need[*k] - widths[*k]).sum();
            if wants > left {
                let share = left;
                for k in &shown {
                    let more = (need[*k] - widths[*k]) * share / wants;
                    widths[*k] += more;
                    left -= more;
                }
            }
            for p in priority {
                let k = fixed + p;
                if shown.contains(&k) {
                    let more = need[k].saturating_sub(widths[k]).min(left);
                    widths[k] += more;
                    left -= more;
                }
            }
            return widths;
        }
        // Drop the text column last in priority.
        let drop = priority.iter().rev().map(|p| fixed + p).find(|k| shown.contains(k));
        shown.retain(|k| Some(*k) != drop);
    }
}

/// `text`'s lines wrapped at spaces to `width` columns (`None`: as they are); a line keeps its
/// indentation, and its continuation is indented by two more.
pub(crate) fn wrap(text: &str, width: Option<usize>) -> String {
    let Some(width) = width.filter(|w| *w > 20) else { return text.to_owned() };
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let body = line.trim_start_matches(' ');
        let indent = (line.len() - body.len()).min(width / 2);
        out.push_str(&line[..indent]);
        let mut used = indent;
        let mut first = true;
        for word in body.split(' ') {
            // A word longer than a line (a path, a C++ name) loses its middle.
            let word = truncate_middle(word, width - 2);
            let w = columns(&word);
            if !first && used + 1 + w > width {
                out.push('\n');
                out.push_str(&" ".repeat(indent + 2));
                used = indent + 2;
            } else if !first {
                out.push(' ');
                used += 1;
            }
            first = false;
            out.push_str(&word);
            used += w;
        }
    }
    out
}

/// `name` cut to `max` columns from its middle.
pub(crate) fn name(name: &str, max: Option<usize>) -> String {
    match max {
        Some(max) => truncate_middle(name, max),
        None => name.to_owned(),
    }
}

/// `location` (`path:line[:column]`) shortened to `max` columns: relative to `cwd` (given when
/// the column is cut, so that all its paths read alike), then with the middle of its folders
/// cut, then as `file:line` alone (cut from the middle if need be).
pub(crate) fn location(location: &str, max: Option<usize>, cwd: Option<&str>) -> String {
    let relative = cwd
        .filter(|d| !d.is_empty())
        .and_then(|d| location.strip_prefix(d.trim_end_matches('/')))
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or(location);
    let Some(max) = max.filter(|max| columns(relative) > *max) else { return relative.to_owned() };
    let file_at = relative.rfind(['/', '\\']).map_or(0, |i| i + 1);
    let (folders, file) = relative.split_at(file_at);
    if max >= FOLDERS_MIN {
        if let Some(cut) = folders_cut(folders, max.saturating_sub(columns(file))) {
            return format!("{cut}{file}");
        }
    }
    truncate_middle(file, max)
}

/// `folders` (`/srv/app/lib/`) in at most `max` columns with whole folders left out of their
/// middle: the first, `…/`, and as many of the last as fit (`/srv/…/lib/`); else without the
/// first (`…/lib/`); `None` when not even one folder fits.
fn folders_cut(folders: &str, max: usize) -> Option<String> {
    let parts: Vec<&str> = folders.split_inclusive(['/', '\\']).collect();
    // The first folder, with the root's `/` before it.
    let first = parts.iter().position(|p| p.len() > 1).map_or(parts.len(), |i| i + 1);
    let (head, rest) = parts.split_at(first.min(parts.len()));
    let head: String = head.concat();
    let with = |head: &str| {
        let room = max.checked_sub(columns(head) + 2)?;
        let mut used = 0;
        let tail: Vec<&str> = rest
            .iter()
            .rev()
            .take_while(|p| {
                used += columns(p);
                used <= room
            })
            .copied()
            .collect();
        (!tail.is_empty()).then(|| format!("{head}…/{}", tail.into_iter().rev().collect::<String>()))
    };
    with(&head).or_else(|| with("")).or_else(|| (columns(&head) + 2 <= max).then(|| format!("{head}…/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_location_goes_first_then_the_name() {
        // Room for 30 beyond the numbers: the location gives way.
        let fixed = [7, 5];
        let room = 60 - table_columns(&[7, 5, 0, 0]);
        assert_eq!(Budget::of(Some(60), &fixed, 10, Some((50, 20))), Some(Budget { name: 10, location: room - 10 }));
        // A long name and a long location: the room is shared as the name and the file:line
        // form need it, neither below its minimum (80 and 20 of 35: the location at 14).
        assert_eq!(
            Budget::of(Some(60), &fixed, 80, Some((50, 20))),
            Some(Budget { name: room - LOCATION_MIN, location: LOCATION_MIN })
        );
        let room80 = 80 - table_columns(&[7, 5, 0, 0]);
        assert_eq!(
            Budget::of(Some(80), &fixed, 40, Some((50, 20))),
            Some(Budget { name: room80 - room80 * 20 / 60, location: room80 * 20 / 60 })
        );
        // A name that fits beside the file:line forms stays whole.
        assert_eq!(Budget::of(Some(60), &fixed, 14, Some((50, 20))), Some(Budget { name: 14, location: room - 14 }));
        // Long C++ names in 200 columns: the locations keep their share (not 14 columns).
        let wide = 200 - table_columns(&[7, 5, 0, 0]);
        let b = Budget::of(Some(200), &fixed, 300, Some((60, 30))).unwrap();
        assert_eq!((b.name + b.location, b.location), (wide, wide * 30 / 330));
        // Nothing fits: both at their minimum (the line wraps).
        assert_eq!(
            Budget::of(Some(20), &fixed, 80, Some((50, 20))),
            Some(Budget { name: NAME_MIN, location: LOCATION_MIN })
        );
        // Enough room, or no width: as they are.
        assert_eq!(Budget::of(Some(200), &fixed, 80, Some((50, 20))), Some(Budget { name: 80, location: 50 }));
        assert_eq!(Budget::of(None, &fixed, 80, Some((50, 20))), None);
        // No location column: the name has it all.
        assert_eq!(
            Budget::of(Some(60), &fixed, 80, None),
            Some(Budget { name: 60 - table_columns(&[7, 5, 0]), location: 0 })
        );
    }

    #[test]
    fn locations_shorten_in_steps() {
        let loc = "/srv/app/node_modules/@acme/money/lib/format.js:12:5";
        assert_eq!(location(loc, None, None), loc);
        assert_eq!(location(loc, Some(80), None), loc);
        assert_eq!(location(loc, Some(80), Some("/srv/app")), "node_modules/@acme/money/lib/format.js:12:5");
        assert_eq!(location(loc, Some(45), Some("/srv/app/")), "node_modules/@acme/money/lib/format.js:12:5");
        assert_eq!(location(loc, Some(30), Some("/elsewhere")), "/srv/…/lib/format.js:12:5");
        assert_eq!(location(loc, Some(40), None), "/srv/…/@acme/money/lib/format.js:12:5");
        assert_eq!(folders_cut("/srv/app/lib/", 7), Some("…/lib/".to_owned()));
        assert_eq!(folders_cut("/srv/app/lib/", 4), None);
        assert_eq!(folders_cut("/srv/a-very-long-folder/", 8), Some("/srv/…/".to_owned()));
        assert_eq!(location(loc, Some(20), None), "format.js:12:5");
        assert_eq!(columns(&location(loc, Some(10), None)), 10);
    }
}
