//! Categories: what a frame (and a sample) is, in the terms a Node engineer thinks in — the
//! user's code, their dependencies, node itself, V8 and native code, GC, idle, `(program)`.
//! One home for the rule, read by `top`'s summary and `--by category`, the timeline, the flame
//! graph's colours and every report.

use cpuprof_model::{Func, FuncId, FuncKind, Profile, VmState};

/// What a frame is. Every frame has exactly one, so the categories of a profile's samples
/// sum to its total.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// The user's code: JavaScript outside `node_modules` and node's internals (and frames
    /// of formats that say nothing more, such as folded stacks).
    App,
    /// JavaScript in an npm package (a url with `/node_modules/`).
    Dependencies,
    /// node's own JavaScript (`node:` urls).
    Node,
    /// V8 and native code: builtins, C++, shared libraries, compiled regular expressions,
    /// and addresses no code covers.
    Native,
    /// Garbage collection: `(garbage collector)`, or the GC VM state of a tick.
    Gc,
    /// The event loop waiting: `(idle)`, or the IDLE VM state of a tick.
    Idle,
    /// V8's `(program)`: in the VM with no JavaScript stack (and the `(root)` itself).
    Program,
}

impl Category {
    /// Every category, in the order reports list them.
    pub const ALL: [Category; 7] = [
        Category::App,
        Category::Dependencies,
        Category::Node,
        Category::Native,
        Category::Gc,
        Category::Idle,
        Category::Program,
    ];

    /// The lowercase name JSON keys and `--by category` rows use.
    ///
    /// ```
    /// use cpuprof_analysis::Category;
    /// let names: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
    /// assert_eq!(names, ["app", "dependencies", "node", "native", "gc", "idle", "program"]);
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Category::App => "app",
            Category::Dependencies => "dependencies",
            Category::Node => "node",
            Category::Native => "native",
            Category::Gc => "gc",
            Category::Idle => "idle",
            Category::Program => "program",
        }
    }

    /// Position in [`Category::ALL`], to index per-category arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The category of a function.
    pub fn of_func(profile: &Profile, func: &Func) -> Category {
        Self::of_code(func.kind, profile.strings.get(func.file))
    }

    /// The category of code of `kind` in `file` (a script url or path; may be empty).
    pub fn of_code(kind: FuncKind, file: &str) -> Category {
        match kind {
            FuncKind::Js => {
                if file.starts_with("node:") {
                    Category::Node
                } else if file.contains("/node_modules/") {
                    Category::Dependencies
                } else {
                    Category::App
                }
            }
            FuncKind::Gc => Category::Gc,
            FuncKind::Idle => Category::Idle,
            FuncKind::Program | FuncKind::Root => Category::Program,
            FuncKind::Native
            | FuncKind::Cpp
            | FuncKind::SharedLib
            | FuncKind::Builtin
            | FuncKind::Regexp
            | FuncKind::Unknown
            | FuncKind::Other => Category::Native,
        }
    }
}

/// The category of every function and of every sample of one profile, computed once.
#[derive(Clone, Debug)]
pub struct Categories {
    of_func: Vec<Category>,
}

impl Categories {
    /// Categorises every function of `profile`.
    pub fn new(profile: &Profile) -> Self {
        Self { of_func: profile.funcs.as_slice().iter().map(|func| Category::of_func(profile, func)).collect() }
    }

    /// The category of function `func`.
    pub fn of_func(&self, func: FuncId) -> Category {
        self.of_func[func.index()]
    }

    /// The category of sample row `row`: its VM state where that says GC or idle (tick logs
    /// count GC ticks whatever code is on top, as node's tick processor does), else the
    /// category of its leaf frame's function.
    pub fn of_sample(&self, profile: &Profile, row: usize) -> Category {
        match profile.samples.vm_states().map(|states| states[row]) {
            Some(VmState::Gc) => Category::Gc,
            Some(VmState::Idle) => Category::Idle,
            _ => self.of_func(profile.func_of(profile.samples.stacks()[row])),
        }
    }
}
