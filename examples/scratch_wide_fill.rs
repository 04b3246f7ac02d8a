use concurrent_cuckoo::WindowedCuckooFilter;
fn main() {
    for (rate, gens) in [(1e-3, 4u64), (1e-6, 4), (1e-6, 100)] {
        for n in [1000usize, 100_000, 1_000_000] {
            let mut loads = vec![];
            let mut fits = 0;
            for seed in 0..5u64 {
                let f = WindowedCuckooFilter::builder().capacity(n).false_positive_rate(rate).generations(gens).seed(seed).build().unwrap();
                let mut i = 0u64;
                while f.insert(&(seed << 40 | i)).is_ok() { i += 1; }
                if i as usize >= n { fits += 1; }
                loads.push(i as f64 / f.slots() as f64);
            }
            let f = WindowedCuckooFilter::builder().capacity(n).false_positive_rate(rate).generations(gens).build().unwrap();
            println!("rate {rate} G {gens} n {n}: lane {} slots {} loads {:?} capacity fits {fits}/5 bytes/key {:.2}", f.lane_bits(), f.slots(), loads.iter().map(|l| format!("{l:.3}")).collect::<Vec<_>>(), f.memory_usage() as f64 / n as f64);
        }
    }
}
