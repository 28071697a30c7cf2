"""A running server's search throughput and latency: CLIENTS asyncio clients asking GET /search (the
8 serve_bench queries, k=10) for SECONDS; for A/B runs of one change, one server at a time.

    python benchmarks/serve_load.py http://127.0.0.1:8801 15 16
"""

import asyncio, sys, time, httpx
QUERIES = ["discrete diffusion with continuous-time Markov chains", "vision-language-action robot policies",
           "mixture of experts routing", "privacy in federated learning", "reinforcement learning from feedback",
           "graph neural networks for molecules", "video world models", "efficient attention for long context"]
async def main(url, seconds, clients):
    lat = []
    end = time.perf_counter() + seconds
    made = [httpx.AsyncClient(base_url=url, timeout=60) for _ in range(clients)]  # before timing (serve_bench)

    async def client(n):
        async with made[n] as c:
            i = n
            while time.perf_counter() < end:
                t = time.perf_counter()
                await c.get("/search", params={"q": QUERIES[i % 8], "k": 10})
                lat.append(time.perf_counter() - t); i += clients
    t0 = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(clients)))
    el = time.perf_counter() - t0
    lat.sort()
    print(f"{len(lat)/el:.1f} q/s p50 {lat[len(lat)//2]*1000:.0f} ms p99 {lat[int(len(lat)*.99)]*1000:.0f} ms")
asyncio.run(main(sys.argv[1], float(sys.argv[2]), int(sys.argv[3])))
