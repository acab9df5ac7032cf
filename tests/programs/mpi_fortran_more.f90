! More Fortran MPI calls, one of each per rank unless said, at 2 ranks; built with `use mpi`,
! or with `use mpi_f08` when compiled with -cpp -DF08. Rank 0 sends rank 1 one integer that
! rank 1 MPI_Probes before receiving; each rank MPI_Iprobes for a message that never comes;
! an Ibarrier completed by Waitany; a message to itself (Irecv, Isend, Waitall), then Test,
! Testall and Waitsome on the finished requests; Ibcast and Iallreduce (each Waited for),
! Scan, Exscan, Gatherv, Scatterv, Allgatherv of one integer; Alltoallv and Reduce_scatter
! of one integer per rank; then MPI-IO on <dir>/more.dat: open, set_size, preallocate,
! iwrite_at (Waited for), write_shared, seek, get_size, iread_at (Waited for), read_shared,
! close, and rank 0 deletes the file.
program fortran_mpi_more
#ifdef F08
  use mpi_f08
  implicit none
  type(MPI_Request) :: requests(2), single, one(1)
  type(MPI_File) :: fh
  type(MPI_Status) :: status
#else
  use mpi
  implicit none
  integer :: requests(2), single, one(1), fh
  integer :: status(MPI_STATUS_SIZE)
#endif
  integer :: ierr
  integer :: rank, nprocs, value, got, index, outcount, indices(2)
  integer :: counts(2), displacements(2), pair(2), back(2)
  integer(kind=MPI_OFFSET_KIND) :: offset, size
  logical :: flag
  character(len=4096) :: directory
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, directory)
  value = rank + 1
  if (rank == 0) call MPI_Send(value, 1, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, ierr)
  if (rank == 1) then
    call MPI_Probe(0, 7, MPI_COMM_WORLD, status, ierr)
    call MPI_Recv(got, 1, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  end if
  call MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, flag, status, ierr)
  call MPI_Ibarrier(MPI_COMM_WORLD, one(1), ierr)
  call MPI_Waitany(1, one, index, status, ierr)
  call MPI_Irecv(got, 1, MPI_INTEGER, rank, 3, MPI_COMM_WORLD, requests(1), ierr)
  call MPI_Isend(value, 1, MPI_INTEGER, rank, 3, MPI_COMM_WORLD, requests(2), ierr)
  call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE, ierr)
  call MPI_Test(requests(1), flag, status, ierr)
  call MPI_Testall(2, requests, flag, MPI_STATUSES_IGNORE, ierr)
  call MPI_Waitsome(2, requests, outcount, indices, MPI_STATUSES_IGNORE, ierr)
  call MPI_Ibcast(value, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, single, ierr)
  call MPI_Wait(single, status, ierr)
  call MPI_Iallreduce(value, got, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, single, ierr)
  call MPI_Wait(single, status, ierr)
  call MPI_Scan(value, got, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Exscan(value, got, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  counts = 1
  displacements = [0, 1]
  call MPI_Gatherv(value, 1, MPI_INTEGER, back, counts, displacements, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call MPI_Scatterv(pair, counts, displacements, MPI_INTEGER, got, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call MPI_Allgatherv(value, 1, MPI_INTEGER, back, counts, displacements, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  pair = value
  call MPI_Alltoallv(pair, counts, displacements, MPI_INTEGER, back, counts, displacements, &
                     MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call MPI_Reduce_scatter(pair, got, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_File_open(MPI_COMM_WORLD, trim(directory) // '/more.dat', &
                     MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  size = 0
  call MPI_File_set_size(fh, size, ierr)
  size = 64
  call MPI_File_preallocate(fh, size, ierr)
  offset = 4 * rank
  call MPI_File_iwrite_at(fh, offset, value, 1, MPI_INTEGER, single, ierr)
  call MPI_Wait(single, status, ierr)
  call MPI_File_write_shared(fh, value, 1, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  offset = 0
  call MPI_File_seek(fh, offset, MPI_SEEK_SET, ierr)
  call MPI_File_get_size(fh, size, ierr)
  offset = 4 * rank
  call MPI_File_iread_at(fh, offset, got, 1, MPI_INTEGER, single, ierr)
  call MPI_Wait(single, status, ierr)
  call MPI_File_read_shared(fh, got, 1, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call MPI_File_close(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) call MPI_File_delete(trim(directory) // '/more.dat', MPI_INFO_NULL, ierr)
  call MPI_Finalize(ierr)
end program fortran_mpi_more

