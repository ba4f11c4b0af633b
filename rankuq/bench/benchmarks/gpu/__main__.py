from rankuq.bench.benchmarks.gpu.measure import main

main()
