// Maximum-weight perfect matching with LEMON (MaxWeightedPerfectMatching), for benchmarks/crossmatch.py --large:
// the same graph and integer weights our blossom solve gets, timed without reading the input.
//
//   apt-get install -y liblemon-dev        (Debian; header-only apart from a small library)
//   g++ -O2 -o benchmarks/matching_lemon benchmarks/matching_lemon.cpp     (the matching is header-only)
//
// Input (a file named on the command line): "n m C", then m lines "i j q" (0 <= i, j < n, q >= 0 an integer
// distance); edge i-j gets the weight C - q, so a maximum-weight perfect matching is a minimum-cost one.
// Output: one line "perfect cost seconds" (perfect 1 if a perfect matching exists, cost the sum of q over it).
#include <lemon/list_graph.h>
#include <lemon/matching.h>

#include <chrono>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s EDGES\n", argv[0]);
        return 2;
    }
    std::FILE* in = std::fopen(argv[1], "r");
    long long n, m, C;
    if (!in || std::fscanf(in, "%lld %lld %lld", &n, &m, &C) != 3) return 2;
    typedef lemon::ListGraph Graph;
    Graph g;
    g.reserveNode(n);
    g.reserveEdge(m);
    std::vector<Graph::Node> nodes(n);
    for (long long v = 0; v < n; ++v) nodes[v] = g.addNode();
    Graph::EdgeMap<long long> weight(g), level(g);
    for (long long t = 0; t < m; ++t) {
        long long i, j, q;
        if (std::fscanf(in, "%lld %lld %lld", &i, &j, &q) != 3) return 2;
        Graph::Edge e = g.addEdge(nodes[i], nodes[j]);
        weight[e] = C - q;
        level[e] = q;
    }
    std::fclose(in);
    auto start = std::chrono::steady_clock::now();
    lemon::MaxWeightedPerfectMatching<Graph, Graph::EdgeMap<long long> > solver(g, weight);
    bool perfect = solver.run();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    long long cost = 0;
    if (perfect)
        for (Graph::EdgeIt e(g); e != lemon::INVALID; ++e)
            if (solver.matching(e)) cost += level[e];
    std::printf("%d %lld %.6f\n", perfect ? 1 : 0, cost, seconds);
    return 0;
}
