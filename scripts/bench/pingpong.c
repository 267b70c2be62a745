/* pingpong.c: the C baseline of scripts/bench-pingpong.sh. Same protocol
 * and output as scripts/bench/pingpong (Go): best of REPS repetitions of
 * the mean round-trip time between ranks 0 and 1, per message size, with
 * MPI_Recv asking for a status and MPI_Get_count (as Hataori does).
 * Build: mpicc -O2 -o pingpong pingpong.c; run with 2 ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int iterations(long size, double scale) {
	int n = 20000;
	if (size >= (1 << 20)) n = 500;
	else if (size >= (1 << 16)) n = 2000;
	n = (int)(n * scale);
	return n < 1 ? 1 : n;
}

static double pingpong(int rank, char *buf, int n, int iters) {
	MPI_Status st;
	int count;
	double t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++) {
		if (rank == 0) {
			MPI_Send(buf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &st);
			MPI_Get_count(&st, MPI_BYTE, &count);
		} else if (rank == 1) {
			MPI_Recv(buf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st);
			MPI_Get_count(&st, MPI_BYTE, &count);
			MPI_Send(buf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
		}
	}
	return MPI_Wtime() - t0;
}

int main(int argc, char **argv) {
	int provided, rank, size;
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	double scale = argc > 2 ? atof(argv[2]) : 1.0;
	long sizes[] = {8, 1024, 1 << 20};
	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2) {
		fprintf(stderr, "pingpong: needs at least 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int s = 0; s < 3; s++) {
		int n = (int)sizes[s], iters = iterations(sizes[s], scale);
		char *buf = calloc(n ? n : 1, 1);
		double best = 1e30;
		for (int r = 0; r < reps; r++) {
			MPI_Barrier(MPI_COMM_WORLD);
			pingpong(rank, buf, n, iters / 10 > 0 ? iters / 10 : 1);
			double d = pingpong(rank, buf, n, iters);
			if (d < best) best = d;
		}
		if (rank == 0) {
			double rtt = best / iters;
			printf("RESULT size=%d iters=%d rtt_us=%.3f mbps=%.1f\n", n, iters, rtt * 1e6, n / (rtt / 2) / 1e6);
		}
		free(buf);
	}
	MPI_Finalize();
	return 0;
}
