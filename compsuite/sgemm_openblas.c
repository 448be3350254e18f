/* The reference BLAS sgemm_ (the symbol torch's libtorch_cpu.so calls through the
 * dynamic linker), forwarded to the scipy-openblas32 wheel's OpenBLAS, whose symbols
 * carry the prefix scipy_.  scripts/setup_env.sh builds it; compsuite run
 * --openblas-kernels loads it (compsuite/kernels.py). */
extern void scipy_sgemm_(const char *transa, const char *transb, const int *m,
                         const int *n, const int *k, const float *alpha, const float *a,
                         const int *lda, const float *b, const int *ldb,
                         const float *beta, float *c, const int *ldc);

void sgemm_(const char *transa, const char *transb, const int *m, const int *n,
            const int *k, const float *alpha, const float *a, const int *lda,
            const float *b, const int *ldb, const float *beta, float *c, const int *ldc)
{
    scipy_sgemm_(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
