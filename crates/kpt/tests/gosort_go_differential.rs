//! `kpt::gosort` against Go's own `sort.Sort`: 3,000 generated arrays (ties, runs,
//! reversed and patterned, lengths past the insertion sort, the ninther and pattern
//! breaking), sorted with kubectl's `--sort-by` comparison (a missing key "less" than
//! anything, itself included), must end in the same permutation.

#[path = "support/go_oracle.rs"]
mod go_oracle;

use kpt::gosort::{Interface, sort};

/// Keys with kubectl's `Less` over them: `None` (no field) is less than anything,
/// another `None` included; the permutation records where each item came from.
struct Keyed {
    keys: Vec<Option<u8>>,
    order: Vec<usize>,
}

impl Interface for Keyed {
    fn len(&self) -> usize {
        self.keys.len()
    }
    fn less(&self, i: usize, j: usize) -> bool {
        match (self.keys[i], self.keys[j]) {
            (None, _) => true,
            (_, None) => false,
            (Some(a), Some(b)) => a < b,
        }
    }
    fn swap(&mut self, i: usize, j: usize) {
        self.keys.swap(i, j);
        self.order.swap(i, j);
    }
}

const ANSWER: &str = r#"
// Keys as the Rust side has them: "-" is a missing field.
type keyed struct {
	keys  []string
	order []int
}

func (k *keyed) Len() int { return len(k.keys) }
func (k *keyed) Less(i, j int) bool {
	if k.keys[i] == "-" {
		return true
	}
	if k.keys[j] == "-" {
		return false
	}
	var a, b int
	fmt.Sscan(k.keys[i], &a)
	fmt.Sscan(k.keys[j], &b)
	return a < b
}
func (k *keyed) Swap(i, j int) {
	k.keys[i], k.keys[j] = k.keys[j], k.keys[i]
	k.order[i], k.order[j] = k.order[j], k.order[i]
}

func answer(in string) string {
	k := &keyed{}
	if in != "" {
		k.keys = strings.Split(in, " ")
	}
	for i := range k.keys {
		k.order = append(k.order, i)
	}
	sort.Sort(k)
	order := make([]string, len(k.order))
	for i, o := range k.order {
		order[i] = fmt.Sprint(o)
	}
	return strings.Join(order, " ")
}
"#;

#[test]
fn orders_as_gos_sort_sort() {
    let dir = tempfile::tempdir().expect("tempdir");
    let program = go_oracle::program(&["fmt", "sort"], ANSWER);
    let Some(bin) = go_oracle::build(dir.path(), &program, "gosort", "", "golang-go") else {
        return;
    };
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut cases: Vec<Vec<Option<u8>>> = Vec::new();
    for n in 0..3000 {
        let len = match n % 4 {
            0 => 1 + (next() % 14) as usize,
            1 => 1 + (next() % 60) as usize,
            _ => 1 + (next() % 300) as usize,
        };
        let distinct = 1 + next() % 40;
        let shape = next() % 5;
        let missing = next() % 4 == 0;
        let keys = (0..len)
            .map(|i| {
                if missing && next() % 6 == 0 {
                    return None;
                }
                let v = match shape {
                    0 => next() % distinct,
                    1 => i as u64 % distinct,
                    2 => (len - i) as u64 % distinct,
                    3 => (i as u64 / 7) % distinct,
                    _ => (i as u64 * 31 + next() % 3) % distinct,
                };
                Some(v as u8)
            })
            .collect();
        cases.push(keys);
    }
    let inputs: Vec<String> = cases
        .iter()
        .map(|k| {
            k.iter()
                .map(|v| v.map_or("-".to_string(), |v| v.to_string()))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let answers = go_oracle::answers(&bin, &inputs);
    let mut differ = 0;
    for (keys, want) in cases.into_iter().zip(&answers) {
        let n = keys.len();
        let mut data = Keyed {
            keys: keys.clone(),
            order: (0..n).collect(),
        };
        sort(&mut data);
        let got = data
            .order
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(" ");
        if &got != want {
            differ += 1;
            if differ < 5 {
                eprintln!("{keys:?}\n  go:   {want}\n  ours: {got}");
            }
        }
    }
    assert_eq!(differ, 0, "{differ} of {} orders differ", answers.len());
}
